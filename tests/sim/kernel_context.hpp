// A probe's context around a simulated device, for tests that launch kernels written with the
// device toolkit directly (no host, no plugin): inputs and options absent, logs dropped.
#pragma once

#include <memory>
#include <string>

#include "memtopo/context.hpp"
#include "memtopo/engine.hpp"

namespace simtest {

class KernelContext {
 public:
  explicit KernelContext(std::unique_ptr<memtopo::engine::Device> device) : device_(std::move(device)) {
    api_.struct_size = sizeof api_;
    api_.get_input = [](void*, const char*, mt_value*) { return 0; };
    api_.get_option = [](void*, const char*, mt_value*) { return 0; };
    api_.log = [](void*, mt_log_level, const char*) {};
    api_.progress = [](void*, double, const char*) {};
    api_.put_result = [](void*, const char*, const mt_value*, const mt_result_info*) { return 0; };
    api_.put_raw = [](void*, const char*, const char* const*, size_t, const double*, size_t) { return 0; };
    api_.cancelled = [](void*) { return 0; };
    c_.struct_size = sizeof c_;
    c_.api = &api_;
    c_.device = &device_->info();
    c_.backend = device_->backend();
    ctx_ = std::make_unique<memtopo::Context>(&c_);
  }
  memtopo::Context& ctx() { return *ctx_; }
  const mt_device_info& info() const { return device_->info(); }

 private:
  std::unique_ptr<memtopo::engine::Device> device_;
  mt_host_api api_{};
  mt_context c_{};
  std::unique_ptr<memtopo::Context> ctx_;
};

}  // namespace simtest
