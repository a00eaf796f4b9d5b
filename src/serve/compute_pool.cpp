#include "serve/compute_pool.hpp"

#include <atomic>
#include <future>

namespace ftb::serve {

struct ComputePool::Task {
    std::function<ApiAnswer()> work;
    std::promise<ApiAnswer> answer;
    std::atomic<bool> abandoned{false};
};

ComputePool::ComputePool(size_t threads, size_t max_waiting) : max_waiting_(max_waiting) {
    for (size_t i = 0; i < std::max<size_t>(1, threads); ++i) threads_.emplace_back([this] { worker(); });
}

ComputePool::~ComputePool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        for (auto& task : waiting_) task->answer.set_value(api_error(503, "error: request: the server is stopping"));
        waiting_.clear();
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
}

void ComputePool::worker() {
    for (;;) {
        std::shared_ptr<Task> task;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            ready_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
            if (stopping_) return;
            task = std::move(waiting_.front());
            waiting_.pop_front();
        }
        if (task->abandoned) continue;
        try {
            task->answer.set_value(task->work());
        } catch (...) {
            task->answer.set_exception(std::current_exception());
        }
    }
}

std::optional<ApiAnswer> ComputePool::run(std::function<ApiAnswer()> work, std::chrono::microseconds limit) {
    auto task = std::make_shared<Task>();
    task->work = std::move(work);
    std::future<ApiAnswer> answer = task->answer.get_future();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_ || waiting_.size() >= max_waiting_) return std::nullopt;
        waiting_.push_back(task);
    }
    ready_.notify_one();
    if (answer.wait_for(limit) != std::future_status::ready) {
        task->abandoned = true;
        return std::nullopt;
    }
    return answer.get();
}

}  // namespace ftb::serve
