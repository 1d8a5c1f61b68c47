// N-API glue only: argument unwrapping, the async worker, result conversion. Device
// enumeration lives in devices/ (plain C++). native/index.ts validates arguments first;
// the checks here are the last line of defence.
#include <napi.h>

#include <utility>

#include "devices/common.h"
#include "devices/detect.h"
#include "devices/environment.h"
#include "devices/library.h"

namespace {

using gpustack::DetectRequest;
using gpustack::DetectResult;

// "" (this process's root) or an absolute path without a trailing '/'.
std::string ParseHostRoot(Napi::Env env, Napi::Value value) {
  if (value.IsUndefined()) return "";
  if (!value.IsString()) throw Napi::TypeError::New(env, "options.hostRoot must be a string");
  std::string root = value.As<Napi::String>().Utf8Value();
  if (root.find('\0') != std::string::npos) throw Napi::TypeError::New(env, "options.hostRoot contains NUL");
  if (!root.empty() && root.front() != '/') throw Napi::RangeError::New(env, "options.hostRoot must be absolute");
  while (!root.empty() && root.back() == '/') root.pop_back();
  return root;
}

DetectRequest ParseRequest(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DetectRequest request;
  Napi::Value options = info.Length() > 0 ? info[0] : env.Undefined();
  Napi::Value wanted = env.Undefined();
  Napi::Value host_root = env.Undefined();
  Napi::Value trace_fd = env.Undefined();
  if (!options.IsUndefined()) {
    if (!options.IsObject()) throw Napi::TypeError::New(env, "options must be an object");
    wanted = options.As<Napi::Object>().Get("manufacturers");
    host_root = options.As<Napi::Object>().Get("hostRoot");
    trace_fd = options.As<Napi::Object>().Get("loadTraceFd");
  }
  request.context.host_root = ParseHostRoot(env, host_root);
  // Internal (native/detect-child.ts): the descriptor that hears of each library load.
  if (!trace_fd.IsUndefined()) {
    double fd = trace_fd.IsNumber() ? trace_fd.As<Napi::Number>().DoubleValue() : -1;
    if (!(fd >= 0 && fd <= 65535 && fd == static_cast<int>(fd))) {
      throw Napi::TypeError::New(env, "options.loadTraceFd must be a file descriptor number");
    }
    request.context.before_load = gpustack::TraceLoadsTo(static_cast<int>(fd));
  }
  if (wanted.IsUndefined()) {
    for (const char* name : gpustack::kManufacturers) request.manufacturers.insert(name);
  } else {
    if (!wanted.IsArray()) throw Napi::TypeError::New(env, "options.manufacturers must be an array");
    Napi::Array list = wanted.As<Napi::Array>();
    for (uint32_t i = 0; i < list.Length(); ++i) {
      Napi::Value item = list.Get(i);
      std::string where = "options.manufacturers[" + std::to_string(i) + "]";
      if (!item.IsString()) throw Napi::TypeError::New(env, where + " must be a string");
      std::string name = item.As<Napi::String>().Utf8Value();
      if (!gpustack::IsManufacturer(name)) throw Napi::RangeError::New(env, where + " is not a manufacturer");
      request.manufacturers.insert(name);
    }
  }
  // Read on the JS thread: getenv() on the worker would race process.env writes.
  request.context.env = gpustack::CaptureEnvironment();
  return request;
}

void SetOptional(Napi::Object& object, const char* key, const std::optional<std::string>& value) {
  if (value) object.Set(key, *value);
}

Napi::Object ToJs(Napi::Env env, const gpustack::Device& device) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("manufacturer", device.manufacturer);
  out.Set("index", Napi::Number::New(env, device.index));
  out.Set("uuid", device.uuid);
  out.Set("product", device.product);
  // Exact as a double: Report::Add caps memory at 16 TiB = 2^24 MiB.
  out.Set("memoryMiB", Napi::Number::New(env, static_cast<double>(device.memory_mib)));
  out.Set("cores", Napi::Number::New(env, device.cores));
  SetOptional(out, "computeCapability", device.compute_capability);
  SetOptional(out, "family", device.family);
  SetOptional(out, "pciBusId", device.pci_bus_id);
  if (device.numa_node) out.Set("numaNode", Napi::Number::New(env, *device.numa_node));
  SetOptional(out, "driverVersion", device.driver_version);
  SetOptional(out, "runtimeVersion", device.runtime_version);
  if (device.partitioning) {
    Napi::Object partitioning = Napi::Object::New(env);
    partitioning.Set("mode", device.partitioning->mode);
    partitioning.Set("enabled", Napi::Boolean::New(env, device.partitioning->enabled));
    out.Set("partitioning", partitioning);
  }
  if (device.fabric) {
    Napi::Object fabric = Napi::Object::New(env);
    fabric.Set("clusterUuid", device.fabric->cluster_uuid);
    fabric.Set("cliqueId", Napi::Number::New(env, device.fabric->clique_id));
    out.Set("fabric", fabric);
  }
  return out;
}

Napi::Object ToJs(Napi::Env env, const DetectResult& result) {
  Napi::Array devices = Napi::Array::New(env, result.devices.size());
  for (uint32_t i = 0; i < result.devices.size(); ++i) devices.Set(i, ToJs(env, result.devices[i]));
  Napi::Array errors = Napi::Array::New(env, result.errors.size());
  for (uint32_t i = 0; i < result.errors.size(); ++i) {
    Napi::Object error = Napi::Object::New(env);
    error.Set("manufacturer", result.errors[i].manufacturer);
    error.Set("code", gpustack::ErrorCodeName(result.errors[i].code));
    error.Set("message", result.errors[i].message);
    errors.Set(i, error);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("devices", devices);
  out.Set("errors", errors);
  return out;
}

class DetectWorker : public Napi::AsyncWorker {
 public:
  DetectWorker(Napi::Env env, DetectRequest request)
      : Napi::AsyncWorker(env, "gpustack:detect"), deferred_(Napi::Promise::Deferred::New(env)),
        request_(std::move(request)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  // Runs on a libuv thread pool thread: plain structs only, no JS values.
  void Execute() override {
    try {
      result_ = gpustack::Detect(request_);
    } catch (const std::exception& error) {
      SetError(error.what());
    }
  }

  void OnOK() override { deferred_.Resolve(ToJs(Env(), result_)); }
  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  DetectRequest request_;
  DetectResult result_;
};

Napi::Value Detect(const Napi::CallbackInfo& info) {
  auto* worker = new DetectWorker(info.Env(), ParseRequest(info));
  Napi::Promise promise = worker->Promise();
  worker->Queue();  // the worker deletes itself after OnOK/OnError
  return promise;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("detect", Napi::Function::New(env, Detect, "detect"));
  return exports;
}

}  // namespace

NODE_API_MODULE(gpustack_native, Init)
