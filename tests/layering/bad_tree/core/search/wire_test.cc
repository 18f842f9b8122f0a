// Allowed: a core test may include third-party headers, and fakes is no module.
#include <iostream>

#include "fakes/fake_store.h"
