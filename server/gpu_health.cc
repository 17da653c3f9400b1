#include "server/gpu_health.h"

#include "spdlog/spdlog.h"

namespace exactq::server {

GpuHealthReporter::GpuHealthReporter(DevicePool* pool, ServerMetrics* metrics) : pool_(pool), metrics_(metrics) {
  metrics_->configured_gpus.At({}).Set(pool_->configured());
  metrics_->usable_gpus.At({}).Set(pool_->usable());
}

void GpuHealthReporter::SetHealthService(grpc::HealthCheckServiceInterface* health) {
  std::lock_guard<std::mutex> lock(mutex_);
  health_ = health;
  health_told_ = false;
}

bool GpuHealthReporter::Poll() {
  const std::vector<DeviceHealth> devices = pool_->Snapshot();
  int usable = 0;
  for (const DeviceHealth& d : devices) usable += d.state == DeviceState::kUsable;
  metrics_->usable_gpus.At({}).Set(usable);

  std::lock_guard<std::mutex> lock(mutex_);
  last_states_.resize(devices.size(), DeviceState::kUsable);
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceHealth& d = devices[i];
    if (d.state == last_states_[i]) continue;
    last_states_[i] = d.state;
    switch (d.state) {
      case DeviceState::kLost:
        spdlog::error("GPU cuda:{} is lost for good (after {} failures): {}", d.device.index, d.failures_total,
                      d.last_error);
        break;
      case DeviceState::kCoolingDown:
        spdlog::warn("GPU cuda:{} is out of the pool for {} s after a failure ({} in a row): {}", d.device.index,
                     std::chrono::ceil<std::chrono::seconds>(d.retry_in).count(), d.failures_in_row, d.last_error);
        break;
      case DeviceState::kUsable:
        spdlog::info("GPU cuda:{} is back in the pool", d.device.index);
        break;
    }
  }
  const bool all_lost = pool_->AllLost();
  if (all_lost && !reported_lost_) {
    reported_lost_ = true;
    spdlog::error(
        "no GPU is left ({} configured, all lost): health NOT_SERVING so the orchestrator replaces this "
        "server; streams in flight finish on the CPU",
        devices.size());
  }
  if (all_lost && health_ != nullptr && !health_told_) {
    health_->SetServingStatus(false);
    health_told_ = true;
  }
  return all_lost;
}

}  // namespace exactq::server
