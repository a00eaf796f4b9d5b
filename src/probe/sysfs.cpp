#include "probe/sysfs.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace ftb::probe {
namespace {

// First line of a small sysfs/proc file, trimmed; empty when missing or unreadable.
std::string read_line(const fs::path& p) {
    std::ifstream in(p);
    std::string line;
    if (!in || !std::getline(in, line)) return {};
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
    return line;
}

long parse_long(const std::string& text, long fallback, int base = 10) {
    if (text.empty()) return fallback;
    char* end = nullptr;
    long v = std::strtol(text.c_str(), &end, base);
    return end == text.c_str() ? fallback : v;
}

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}
std::vector<int> parse_cpu_list(const std::string& text) {
    std::vector<int> cpus;
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, ',')) {
        if (part.empty()) continue;
        auto dash = part.find('-');
        long lo = parse_long(part.substr(0, dash), -1);
        long hi = dash == std::string::npos ? lo : parse_long(part.substr(dash + 1), -1);
        if (lo < 0 || hi < lo || hi - lo > 1 << 20) continue;
        for (long c = lo; c <= hi; ++c) cpus.push_back(static_cast<int>(c));
    }
    return cpus;
}

}  // namespace

int pcie_gen_from_speed(const std::string& speed_text) {
    // sysfs writes the rate per lane in GT/s ("16.0 GT/s PCIe", older kernels "8 GT/s").
    char* end = nullptr;
    double gts = std::strtod(speed_text.c_str(), &end);
    if (end == speed_text.c_str() || gts <= 0) return 0;
    if (gts < 3) return 1;     // 2.5 GT/s
    if (gts < 6) return 2;     // 5
    if (gts < 12) return 3;    // 8
    if (gts < 24) return 4;    // 16
    if (gts < 48) return 5;    // 32
    if (gts < 96) return 6;    // 64
    return 7;                  // 128
}

double pcie_link_GBps(int gen, int width) {
    if (gen <= 0 || width <= 0) return 0;
    static const double gt_per_s[] = {0, 2.5, 5, 8, 16, 32, 64, 128};
    int g = std::min(gen, 7);
    double encoding = g <= 2 ? 8.0 / 10.0 : g <= 5 ? 128.0 / 130.0 : 242.0 / 256.0;
    return gt_per_s[g] * encoding * width / 8.0;  // GT/s per lane = Gbit/s per lane before encoding
}

bool PciDevice::is_gpu() const {
    uint32_t base = class_code >> 16, sub = (class_code >> 8) & 0xff;
    // 0x03xx display controllers; 0x1200 processing accelerators (e.g. Gaudi, some AMD Instinct).
    bool display = base == 0x03 && (sub == 0x00 || sub == 0x02);
    bool accelerator = base == 0x12;
    bool gpu_vendor = vendor_id == 0x10de || vendor_id == 0x1002 || vendor_id == 0x8086 || vendor_id == 0x1da3;
    // Server boards carry a small BMC VGA chip (e.g. ASPEED 0x1a03); it is not a GPU.
    return (display || accelerator) && gpu_vendor;
}
bool PciDevice::is_nic() const {
    uint32_t base = class_code >> 16, sub = (class_code >> 8) & 0xff;
    return base == 0x02 && (sub == 0x00 || sub == 0x07);  // Ethernet, InfiniBand
}
bool PciDevice::is_nvme() const { return (class_code >> 8) == 0x0108; }
bool PciDevice::link_downtrained() const {
    if (link_gen <= 0 || max_link_gen <= 0) return false;
    return link_gen < max_link_gen || (max_link_width > 0 && link_width < max_link_width);
}

std::string pci_class_name(const PciDevice& d) {
    if (d.is_gpu()) return "gpu";
    if (d.is_nic()) return "nic";
    if (d.is_nvme()) return "nvme";
    return "other";
}

std::vector<PciDevice> read_pci_devices(const std::string& root) {
    std::vector<PciDevice> devices;
    fs::path dir = fs::path(root) / "sys/bus/pci/devices";
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return devices;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        fs::path p = entry.path();
        PciDevice d;
        d.address = p.filename().string();
        d.class_code = static_cast<uint32_t>(parse_long(read_line(p / "class"), 0, 16));
        d.vendor_id = static_cast<uint16_t>(parse_long(read_line(p / "vendor"), 0, 16));
        d.device_id = static_cast<uint16_t>(parse_long(read_line(p / "device"), 0, 16));
        d.numa_node = static_cast<int>(parse_long(read_line(p / "numa_node"), -1));
        d.link_gen = pcie_gen_from_speed(read_line(p / "current_link_speed"));
        d.max_link_gen = pcie_gen_from_speed(read_line(p / "max_link_speed"));
        d.link_width = static_cast<int>(parse_long(read_line(p / "current_link_width"), 0));
        d.max_link_width = static_cast<int>(parse_long(read_line(p / "max_link_width"), 0));
        // A width of 0 or 255 means "no link" (kernel prints the raw register field).
        if (d.link_width > 32) d.link_width = 0;
        if (d.max_link_width > 32) d.max_link_width = 0;
        devices.push_back(d);
    }
    std::sort(devices.begin(), devices.end(), [](auto& a, auto& b) { return a.address < b.address; });
    return devices;
}

namespace {

// Model, vendor and the bf16 instruction sets, from the first CPU in /proc/cpuinfo.
void read_cpuinfo(const fs::path& root, HostInfo& h) {
    std::ifstream cpuinfo(root / "proc/cpuinfo");
    std::string line;
    std::set<std::string> flags;
    while (std::getline(cpuinfo, line)) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
        std::string value = line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.erase(0, 1);
        if (key == "model name" && h.cpu_model.empty()) h.cpu_model = value;
        else if (key == "vendor_id" && h.vendor.empty()) h.vendor = value;
        else if (key == "flags" && flags.empty()) {
            std::stringstream ss(value);
            std::string f;
            while (ss >> f) flags.insert(f);
        }
    }
    if (h.vendor == "GenuineIntel") h.vendor = "intel";
    else if (h.vendor == "AuthenticAMD") h.vendor = "amd";
    h.has_avx512_bf16 = flags.count("avx512_bf16") > 0;
    h.has_amx_bf16 = flags.count("amx_tile") > 0 && flags.count("amx_bf16") > 0;
}

// The numbers N of the entries PREFIX<N> of a folder (cpu0, node1, ...), for kernels without an `online` list.
std::vector<int> numbered_entries(const fs::path& dir, const std::string& prefix) {
    std::vector<int> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        if (n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
            std::all_of(n.begin() + static_cast<std::ptrdiff_t>(prefix.size()), n.end(), ::isdigit))
            out.push_back(std::atoi(n.c_str() + prefix.size()));
    }
    return out;
}

// Sockets and physical cores from each online CPU's topology; returns the package of each CPU.
std::map<int, long> read_cpu_topology(const fs::path& root, HostInfo& h) {
    std::set<long> packages;
    std::set<std::pair<long, long>> cores;
    std::map<int, long> cpu_package;
    const fs::path cpu_dir = root / "sys/devices/system/cpu";
    std::vector<int> online = parse_cpu_list(read_line(cpu_dir / "online"));
    if (online.empty()) online = numbered_entries(cpu_dir, "cpu");
    for (int cpu : online) {
        fs::path topo = cpu_dir / fmt::format("cpu{}", cpu) / "topology";
        long pkg = parse_long(read_line(topo / "physical_package_id"), 0);
        long core = parse_long(read_line(topo / "core_id"), cpu);
        packages.insert(pkg);
        cores.insert({pkg, core});
        cpu_package[cpu] = pkg;
        if (h.max_ghz == 0) {
            long khz = parse_long(read_line(cpu_dir / fmt::format("cpu{}", cpu) / "cpufreq/cpuinfo_max_freq"), 0);
            if (khz > 0) h.max_ghz = khz / 1e6;
        }
    }
    h.logical_cpus = static_cast<int>(online.size());
    h.sockets = static_cast<int>(packages.size());
    h.cores = static_cast<int>(cores.size());
    return cpu_package;
}

// NUMA nodes and the socket each belongs to (the package of its first CPU).
void read_numa_nodes(const fs::path& root, const std::map<int, long>& cpu_package, HostInfo& h) {
    const fs::path node_dir = root / "sys/devices/system/node";
    std::vector<int> nodes = parse_cpu_list(read_line(node_dir / "online"));
    if (nodes.empty()) nodes = numbered_entries(node_dir, "node");
    std::sort(nodes.begin(), nodes.end());
    h.numa_nodes = std::max<int>(1, static_cast<int>(nodes.size()));
    int max_node = nodes.empty() ? 0 : nodes.back();
    h.numa_node_socket.assign(static_cast<size_t>(max_node) + 1, 0);
    // Socket numbers are the rank of the package id (ids need not be dense).
    std::map<long, int> package_rank;
    for (const auto& [cpu, pkg] : cpu_package) package_rank.emplace(pkg, 0);
    int rank = 0;
    for (auto& [pkg, r] : package_rank) r = rank++;
    for (int n : nodes) {
        std::vector<int> cpus = parse_cpu_list(read_line(node_dir / fmt::format("node{}", n) / "cpulist"));
        auto it = cpus.empty() ? cpu_package.end() : cpu_package.find(cpus.front());
        if (it != cpu_package.end()) h.numa_node_socket[static_cast<size_t>(n)] = package_rank[it->second];
    }
}

double read_memory_total_bytes(const fs::path& root) {
    std::ifstream meminfo(root / "proc/meminfo");
    std::string line;
    while (std::getline(meminfo, line))
        if (line.compare(0, 9, "MemTotal:") == 0) return std::strtod(line.c_str() + 9, nullptr) * 1024.0;  // kB = KiB
    return 0;
}

}  // namespace

HostInfo read_host_info(const std::string& root) {
    HostInfo h;
    const fs::path r(root);
    read_cpuinfo(r, h);
    read_numa_nodes(r, read_cpu_topology(r, h), h);
    h.memory_bytes = read_memory_total_bytes(r);
    return h;
}

std::vector<std::string> pcie_warnings(const std::vector<PciDevice>& devices) {
    std::vector<std::string> out;
    std::set<int> nic_nodes;
    bool any_nic = false;
    for (const auto& d : devices) {
        if (d.is_nic()) {
            any_nic = true;
            nic_nodes.insert(d.numa_node);
        }
    }
    for (const auto& d : devices) {
        std::string kind = pci_class_name(d);
        if (kind == "other") continue;
        // GPUs drop their link rate when idle to save power (a gen1 reading at idle is normal), so a
        // GPU's generation is judged from NVML under load; sysfs judges its width only.
        bool width_down = d.max_link_width > 0 && d.link_width > 0 && d.link_width < d.max_link_width;
        if (d.is_gpu() ? width_down : d.link_downtrained())
            out.push_back(fmt::format("pcie: {} {} link trained down to gen{} x{} (device supports gen{} x{}): "
                                      "{:.1f} of {:.1f} GB/s per direction",
                                      kind, d.address, d.link_gen, d.link_width, d.max_link_gen,
                                      d.max_link_width, pcie_link_GBps(d.link_gen, d.link_width),
                                      pcie_link_GBps(d.max_link_gen, d.max_link_width)));
        if (d.is_gpu() && any_nic && d.numa_node >= 0 && !nic_nodes.count(d.numa_node))
            out.push_back(fmt::format("numa: gpu {} is on NUMA node {} with no NIC there: "
                                      "its network traffic crosses the socket link",
                                      d.address, d.numa_node));
    }
    return out;
}

}  // namespace ftb::probe
