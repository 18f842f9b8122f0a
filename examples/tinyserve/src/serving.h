// tinyserve --serve: the engine behind HTTP on 127.0.0.1, driven by tsload (load.cc).
//
//   GET /health          200 once the model is loaded
//   GET /generate?id=K   serves request K of the seeded workload (K modulo its size) and answers
//                        {"id", "tokens", "service_ms"}: tokens are prompt + output tokens,
//                        service_ms the request's time on the serving thread's CPU clock
//   GET /shutdown        answers, then exits 0 (the campaign's graceful stop)
//
// Requests are served one at a time, by one Server that lives as long as the process: its
// prefix cache and KV pool (TS_PREFIX_CACHE, TS_KV_POOL) carry over from request to request,
// and concurrent clients wait in the listen queue, so their latency includes the wait, as with
// a real server. With `daemon` it detaches as classic daemons do (double fork, a session of its
// own, working directory /, stdin from /dev/null) once it listens; stdout and stderr are kept,
// so its log still reaches whoever started it.
#pragma once

#include <vector>

#include "server.h"

namespace tinyserve {

// Returns the process's exit status: 0 after /shutdown, 1 when it cannot listen.
int ServeHttp(Server* server, const std::vector<Request>& workload, int port, bool daemon);

}  // namespace tinyserve
