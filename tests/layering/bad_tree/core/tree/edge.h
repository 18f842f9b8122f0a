// Forbidden: core includes app. Its includes of core and util are allowed.
#pragma once

#include "app/campaign.h"
#include "core/model/model.h"
#include "util/result.h"
