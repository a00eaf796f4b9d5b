// Printers of the probe: CONTRACT.md JSON keys, the system file (data/README.md systems/ format),
// and the merge of the CUDA probe library's JSON.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "ftbound/error.hpp"
#include "probe/gpu_probe.hpp"
#include "probe/probe.hpp"

using namespace ftb::probe;

namespace {

ProbeReport cpu_report() {
    ProbeReport r;
    r.hostname = "box";
    r.host.cpu_model = "Test CPU";
    r.host.vendor = "amd";
    r.host.sockets = 2;
    r.host.cores = 64;
    r.host.logical_cpus = 128;
    r.host.numa_nodes = 2;
    r.host.numa_node_socket = {0, 1};
    r.host.memory_bytes = 512.0 * 1024 * 1024 * 1024;
    r.host_bench.threads = 128;
    r.host_bench.memory_bandwidth_GBps = measurement_of({300, 320, 310});
    r.host_bench.fp32 = GemmRate{measurement_of({4.0, 4.2}), "blas sgemm", 4096};
    r.storage.measured = true;
    r.storage.dir = "/data";
    r.storage.read_GBps = measurement_of({6.0, 6.2, 6.1});
    r.storage.write_GBps = measurement_of({3.0, 3.1, 2.9});
    PciDevice nic;
    nic.address = "0000:18:00.0";
    nic.class_code = 0x020000;
    nic.numa_node = 1;
    nic.link_gen = nic.max_link_gen = 4;
    nic.link_width = nic.max_link_width = 16;
    r.pci_devices.push_back(nic);
    r.skipped.push_back("gpu: no NVIDIA driver");
    return r;
}

// A CUDA probe document as cuda_probe_api.h describes it, for two GPUs.
const char* kCudaDoc = R"({"abi":1,"error":null,
 "devices":[
  {"index":0,"name":"NVIDIA H200","pci_bus_id":"00000000:17:00.0","memory_bytes":150323855360,"cc_major":9,"cc_minor":0,
   "h2d_pinned_GBps":[55.1,55.3,55.2],"d2h_pinned_GBps":[52.0,52.2,52.1],"h2d_pageable_GBps":[20,21,22],
   "d2h_pageable_GBps":[18,19,20],"d2d_GBps":[4000,4010,4020],"h2d_latency_us":[2.1,2.0,2.2],
   "gemm":[{"dtype":"bf16","library":"cublas","m":4096,"n":4096,"k":4096,"tflops":[600,610,620]},
           {"dtype":"bf16","library":"cublas","m":8192,"n":8192,"k":8192,"tflops":[700,710,720]},
           {"dtype":"fp8","library":"cublaslt","m":8192,"n":8192,"k":8192,"error":"no algorithm"}]},
  {"index":1,"name":"NVIDIA H200","pci_bus_id":"00000000:18:00.0","memory_bytes":150323855360,"cc_major":9,"cc_minor":0,
   "h2d_pinned_GBps":[54],"d2h_pinned_GBps":[51],"d2d_GBps":[3900],
   "gemm":[{"dtype":"bf16","library":"cublas","m":8192,"n":8192,"k":8192,"tflops":[690]}]}],
 "peer":[{"src":0,"dst":1,"peer_access":true,"GBps":[380,390,385]},{"src":1,"dst":0,"peer_access":true,"GBps":[370,372,371]}],
 "nccl":[{"op":"all_reduce","bytes":268435456,"gpus":2,"busbw_GBps":[350,355,360]}],
 "nccl_skipped":null})";

}  // namespace

TEST(ProbeReport, JsonHasContractKeysAndNoNaN) {
    ProbeReport r = cpu_report();
    auto j = to_json(r);
    for (const char* k : {"cpu_model", "sockets", "cores", "numa_nodes", "memory_bytes", "memory_bandwidth_GBps", "fp32_tflops", "bf16_tflops"})
        EXPECT_TRUE(j["host"].contains(k)) << k;
    EXPECT_DOUBLE_EQ(j["host"]["memory_bandwidth_GBps"].get<double>(), 310);
    EXPECT_TRUE(j["host"]["bf16_tflops"].is_null());  // no bf16 path measured
    EXPECT_DOUBLE_EQ(j["storage"]["read_GBps"].get<double>(), 6.1);
    EXPECT_TRUE(j["gpus"].is_array() && j["gpus"].empty());
    EXPECT_TRUE(j["warnings"].is_array());
    EXPECT_EQ(j["samples"]["host.memory_bandwidth_GBps"].size(), 3u);
    EXPECT_EQ(j["samples"]["storage.write_GBps"].size(), 3u);
    EXPECT_EQ(j.dump().find("NaN"), std::string::npos);
    std::string text = to_text(r);
    EXPECT_NE(text.find("memory bandwidth"), std::string::npos);
    EXPECT_NE(text.find("310 GB/s"), std::string::npos);
    EXPECT_NE(text.find("n=3 min 300 max 320"), std::string::npos);
}

TEST(ProbeReport, CpuOnlySystemFile) {
    YAML::Node y = YAML::Load(to_system_yaml(cpu_report()));
    EXPECT_EQ(y["name"].as<std::string>(), "probed-box");
    EXPECT_TRUE(y["cpu_only"].as<bool>());
    EXPECT_FALSE(y["gpu"]);
    EXPECT_EQ(y["sockets"].as<int>(), 2);
    EXPECT_EQ(y["cpu"]["name"].as<std::string>(), "Test CPU");
    EXPECT_EQ(y["cpu"]["cores"].as<int>(), 32);                              // per socket
    EXPECT_DOUBLE_EQ(y["cpu"]["memory_bandwidth_GBps"].as<double>(), 155);   // 310 over 2 sockets
    EXPECT_DOUBLE_EQ(y["cpu"]["tflops"]["fp32"].as<double>(), 2.05);
    EXPECT_FALSE(y["cpu"]["tflops"]["bf16"]);  // not measured: left out, never written as 0
    EXPECT_DOUBLE_EQ(y["host_memory"].as<double>(), 512.0 * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(y["storage"]["read_GBps"].as<double>(), 6.1);
    auto measured = y["measured_fields"].as<std::vector<std::string>>();
    for (const char* f : {"host_cpu.memory_bandwidth_GBps", "host_cpu.tflops.fp32", "local_storage.read_GBps", "local_storage.write_GBps"})
        EXPECT_NE(std::find(measured.begin(), measured.end(), f), measured.end()) << f;
    EXPECT_EQ(std::find(measured.begin(), measured.end(), "host_cpu.tflops.bf16"), measured.end());
    // Components: two sockets and the NIC on socket 1, linked at its PCIe gen4 x16 rate.
    ASSERT_EQ(y["components"].size(), 3u);
    EXPECT_EQ(y["components"][2]["id"].as<std::string>(), "nic0");
    EXPECT_EQ(y["components"][2]["socket"].as<int>(), 1);
    ASSERT_EQ(y["links"].size(), 1u);
    EXPECT_EQ(y["links"][0]["b"].as<std::string>(), "cpu1");
    EXPECT_NEAR(y["links"][0]["link"]["bandwidth_GBps"].as<double>(), 31.51, 0.01);
}

TEST(ProbeReport, MergesCudaProbeAndWritesGpuSystem) {
    ProbeReport r = cpu_report();
    GpuInfo nvml0;  // as NVML saw it: found by bus id, keeps NVML's facts
    nvml0.name = "NVIDIA H200";
    nvml0.pci_address = "0000:17:00.0";
    nvml0.memory_bytes = 150323855360.0;
    nvml0.power_limit_w = 700;
    nvml0.pcie_gen = nvml0.pcie_max_gen = 5;
    nvml0.pcie_width = nvml0.pcie_max_width = 16;
    nvml0.numa_node = 1;
    r.gpus.push_back(nvml0);
    merge_cuda_probe_json(kCudaDoc, r);
    ASSERT_EQ(r.gpus.size(), 2u);
    EXPECT_EQ(r.gpus[0].power_limit_w, 700);
    EXPECT_DOUBLE_EQ(r.gpus[0].h2d_GBps->median(), 55.2);
    EXPECT_DOUBLE_EQ(r.gpus[0].tflops.bf16->median(), 710);  // the best shape
    EXPECT_EQ(r.gpus[0].gemm_shapes.size(), 2u);
    EXPECT_FALSE(r.gpus[0].tflops.fp8);
    EXPECT_EQ(std::count_if(r.warnings.begin(), r.warnings.end(), [](auto& w) { return w.find("no algorithm") != std::string::npos; }), 1);
    ASSERT_EQ(r.peer_copies.size(), 2u);
    ASSERT_EQ(r.collectives.size(), 1u);
    EXPECT_DOUBLE_EQ(r.collectives[0].busbw_GBps.median(), 355);

    auto j = to_json(r);
    const auto& g = j["gpus"][0];
    for (const char* k : {"name", "memory_bytes", "pcie", "h2d_GBps", "d2h_GBps", "h2d_pageable_GBps", "hbm_GBps", "tflops", "power_limit_w"})
        EXPECT_TRUE(g.contains(k)) << k;
    EXPECT_EQ(g["catalog_name"], "h200-sxm");
    EXPECT_TRUE(g["tflops"]["fp8"].is_null());
    EXPECT_EQ(j["samples"]["gpus[0].h2d_GBps"].size(), 3u);

    YAML::Node y = YAML::Load(to_system_yaml(r));
    EXPECT_FALSE(y["cpu_only"].as<bool>());
    EXPECT_EQ(y["gpus_per_node"].as<int>(), 2);
    EXPECT_EQ(y["gpu"]["base"].as<std::string>(), "h200-sxm");
    EXPECT_DOUBLE_EQ(y["gpu"]["memory_bandwidth_GBps"].as<double>(), 3900);  // the slower GPU
    EXPECT_DOUBLE_EQ(y["gpu"]["tflops"]["bf16"].as<double>(), 690);
    EXPECT_FALSE(y["gpu"]["tflops"]["fp8"]);  // not measured: the catalog's figure stays
    EXPECT_EQ(y["gpu"]["host_link"].as<std::string>(), "pcie5");
    bool gpu_link = false, peer_link = false;
    for (const auto& l : y["links"]) {
        auto a = l["a"].as<std::string>(), b = l["b"].as<std::string>();
        if (a == "gpu0" && b == "cpu1") {
            gpu_link = true;
            EXPECT_DOUBLE_EQ(l["link"]["bandwidth_GBps"].as<double>(), 52.1);  // slower direction
            EXPECT_DOUBLE_EQ(l["link"]["latency_us"].as<double>(), 2.1);
        }
        if (a == "gpu0" && b == "gpu1") {
            peer_link = true;
            EXPECT_DOUBLE_EQ(l["link"]["bandwidth_GBps"].as<double>(), 371);
        }
    }
    EXPECT_TRUE(gpu_link);
    EXPECT_TRUE(peer_link);
    auto measured = y["measured_fields"].as<std::vector<std::string>>();
    for (const char* f : {"device.memory_bandwidth_GBps", "device.tflops.bf16", "links.gpu0-cpu1.bandwidth_GBps", "links.gpu0-gpu1.bandwidth_GBps"})
        EXPECT_NE(std::find(measured.begin(), measured.end(), f), measured.end()) << f;
}

TEST(ProbeReport, MalformedCudaDocumentIsABug) {
    ProbeReport r;
    EXPECT_THROW(merge_cuda_probe_json("{not json", r), ftb::InternalError);
}

TEST(ProbeReport, CatalogNamesFromDriverNames) {
    const double gib = 1024.0 * 1024 * 1024;
    EXPECT_EQ(catalog_gpu_name("NVIDIA H100 80GB HBM3", 80 * gib), "h100-sxm");
    EXPECT_EQ(catalog_gpu_name("NVIDIA H100 PCIe", 80 * gib), "h100-pcie");
    EXPECT_EQ(catalog_gpu_name("NVIDIA H100 NVL", 94 * gib), "h100-nvl");
    EXPECT_EQ(catalog_gpu_name("NVIDIA H200 NVL", 141 * gib), "h200-nvl");
    EXPECT_EQ(catalog_gpu_name("NVIDIA A100-SXM4-40GB", 40 * gib), "a100-sxm-40gb");
    EXPECT_EQ(catalog_gpu_name("NVIDIA A100 80GB PCIe", 80 * gib), "a100-pcie-80gb");
    EXPECT_EQ(catalog_gpu_name("NVIDIA L4", 23 * gib), "l4");
    EXPECT_EQ(catalog_gpu_name("NVIDIA GeForce RTX 4090", 24 * gib), "rtx-4090");
    EXPECT_EQ(catalog_gpu_name("NVIDIA T4", 15 * gib), "");
}

TEST(ProbeReport, ThrottleBitsNamed) {
    EXPECT_TRUE(throttle_reason_names(0x1).empty());  // idle is not a slowdown
    auto names = throttle_reason_names(0x4 | 0x40);
    ASSERT_EQ(names.size(), 2u);
    EXPECT_EQ(names[0], "sw_power_cap");
    EXPECT_EQ(names[1], "hw_thermal");
}
