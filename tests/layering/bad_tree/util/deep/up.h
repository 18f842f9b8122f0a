// Forbidden: util includes core.
#pragma once

#include "core/model/model.h"
