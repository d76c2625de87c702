#include "amg/cuda/timed_operator.hpp"

#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {

StreamTimer::~StreamTimer() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);  // a pending event is released once it completes
}

void StreamTimer::record() {
  if (recorded_ == events_.size()) {
    cudaEvent_t e = nullptr;
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDefault));
    events_.push_back(e);
  }
  TESSERA_CUDA_CHECK(cudaEventRecord(events_[recorded_], stream_));
  ++recorded_;
}

void StreamTimer::record_noexcept() noexcept {
  try {
    record();
  } catch (...) {
    if (recorded_ % 2) --recorded_;  // drop the begin: the pairs stay aligned
  }
}

double StreamTimer::seconds() {
  const std::size_t pairs = recorded_ / 2;
  if (pairs > 0) TESSERA_CUDA_CHECK(cudaEventSynchronize(events_[2 * pairs - 1]));
  for (std::size_t i = 0; i < pairs; ++i) {
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]));
    seconds_ += 1e-3 * double(ms);
  }
  sections_ += std::int64_t(pairs);
  recorded_ = 0;
  return seconds_;
}

void TimedOperator::apply(double alpha, const double* x, double beta, double* y) {
  const StreamTimer::Section timed(timer_);
  inner_.apply(alpha, x, beta, y);
}

void TimedOperator::residual(const double* x, const double* b, double* r) {
  const StreamTimer::Section timed(timer_);
  inner_.residual(x, b, r);
}

}  // namespace tessera::amg::gpu
