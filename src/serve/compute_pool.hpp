// A fixed set of threads that run the API's computations, so that many connections cannot start more plans than
// there are cores, and a request that waits longer than its time limit is answered (503) instead of hanging.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "serve/api.hpp"

namespace ftb::serve {

class ComputePool {
public:
    ComputePool(size_t threads, size_t max_waiting);
    ~ComputePool();   // drops the work still waiting, finishes the work running
    ComputePool(const ComputePool&) = delete;
    ComputePool& operator=(const ComputePool&) = delete;

    // The answer of `work`, or nullopt when too much work is waiting or `limit` passes first (the work is then
    // dropped if it has not started, and its answer discarded if it has).
    std::optional<ApiAnswer> run(std::function<ApiAnswer()> work, std::chrono::microseconds limit);

private:
    struct Task;
    void worker();
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::shared_ptr<Task>> waiting_;
    size_t max_waiting_;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace ftb::serve
