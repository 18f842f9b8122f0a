// Forbidden: core includes JSON and a process header.
#include <nlohmann/json.hpp>
#include <unistd.h>
