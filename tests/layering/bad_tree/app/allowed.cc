// Allowed: app links store, core and util.
#include "core/model/model.h"
#include "store/sqlite_store.h"
#include "util/result.h"
