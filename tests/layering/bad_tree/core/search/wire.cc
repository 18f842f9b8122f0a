// Forbidden: core includes JSON and a process header.
#include <unistd.h>

#include <nlohmann/json.hpp>
