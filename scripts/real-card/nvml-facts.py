"""NVML's own answer, through NVIDIA's Python bindings (nvidia-ml-py), for each GPU: what
scripts/real-card/run.sh compares `gpustack-operator detect` with. Fields NVML refuses on this
card are null, with the error in `refused`. Prints JSON."""
import json

import pynvml as nv


def ask(refused, name, call, *args):
    try:
        return call(*args)
    except Exception as error:  # NVMLError, or a binding too old to know the call
        refused[name] = str(error)
        return None


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def device_facts(index):
    handle = nv.nvmlDeviceGetHandleByIndex(index)
    refused = {}
    memory = nv.nvmlDeviceGetMemoryInfo(handle)
    memory_v2 = ask(refused, "memory_v2", nv.nvmlDeviceGetMemoryInfo, handle, nv.nvmlMemory_v2)
    pci = nv.nvmlDeviceGetPciInfo(handle)
    mig = ask(refused, "mig_mode", nv.nvmlDeviceGetMigMode, handle)
    cc = ask(refused, "compute_capability", nv.nvmlDeviceGetCudaComputeCapability, handle)
    node_set = ask(refused, "memory_affinity", nv.nvmlDeviceGetMemoryAffinity, handle, 4, 0)
    numa = None
    if node_set:
        for word, bits in enumerate(node_set):
            if bits:
                numa = word * 64 + (bits & -bits).bit_length() - 1
                break
    return {
        "index": index,
        "name": text(nv.nvmlDeviceGetName(handle)),
        "uuid": text(nv.nvmlDeviceGetUUID(handle)),
        "memory_v1_total": memory.total,
        "memory_v2": None
        if memory_v2 is None
        else {"total": memory_v2.total, "reserved": memory_v2.reserved, "free": memory_v2.free, "used": memory_v2.used},
        "pci_bus_id": text(pci.busId),
        "pci_device_id": hex(pci.pciDeviceId),
        "compute_capability": None if cc is None else f"{cc[0]}.{cc[1]}",
        "cores": ask(refused, "cores", nv.nvmlDeviceGetNumGpuCores, handle),
        "mig_mode": None if mig is None else {"current": mig[0], "pending": mig[1]},
        "numa_node": numa,
        "architecture": ask(refused, "architecture", nv.nvmlDeviceGetArchitecture, handle),
        "brand": ask(refused, "brand", nv.nvmlDeviceGetBrand, handle),
        "minor_number": ask(refused, "minor_number", nv.nvmlDeviceGetMinorNumber, handle),
        "refused": refused,
    }


nv.nvmlInit()
try:
    cuda = nv.nvmlSystemGetCudaDriverVersion_v2()
    print(
        json.dumps(
            {
                "nvml_version": text(nv.nvmlSystemGetNVMLVersion()),
                "driver_version": text(nv.nvmlSystemGetDriverVersion()),
                "cuda_driver_version": cuda,
                "cuda_version": f"{cuda // 1000}.{cuda % 1000 // 10}",
                "devices": [device_facts(i) for i in range(nv.nvmlDeviceGetCount())],
            },
            indent=2,
        )
    )
finally:
    nv.nvmlShutdown()
