#include "spec/job_file.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>

#include "ftbound/error.hpp"
#include "spec/catalog.hpp"
#include "spec/hf_config.hpp"
#include "spec/job_keys.hpp"
#include "memory/training_setup.hpp"
#include "system/topology.hpp"

namespace fs = std::filesystem;

namespace ftb {
namespace {

// Module names, or `all-linear` (or nothing): every linear layer of the blocks.
void set_lora_targets(LoraConfig& lora, const std::vector<std::string>& targets) {
    lora.all_linear = targets.empty() || (targets.size() == 1 && targets[0] == "all-linear");
    lora.targets = lora.all_linear ? std::vector<std::string>{} : targets;
}

template <typename E>
E choose(const Fields& f, const std::string& key, const std::vector<std::pair<std::string, E>>& table,
         const std::string& dflt) {
    std::vector<std::string> names;
    for (auto& [n, e] : table) names.push_back(n);
    std::string v = f.get_choice(key, names).value_or(dflt);
    for (auto& [n, e] : table)
        if (n == v) return e;
    f.fail(key, "default '" + dflt + "' is not a valid choice");  // a bug in a framework profile
}

const std::vector<std::pair<std::string, Method>> kMethods = {
    {"full", Method::full}, {"lora", Method::lora}, {"qlora", Method::qlora}, {"freeze", Method::freeze},
    {"oft", Method::oft},   {"qoft", Method::qoft}};
const std::vector<std::pair<std::string, EncoderTraining>> kEncoderTraining = {
    {"trained", EncoderTraining::trained}, {"projector", EncoderTraining::projector}, {"frozen", EncoderTraining::frozen},
    {"adapters", EncoderTraining::adapters}};
const std::vector<std::pair<std::string, TrainedBlocks>> kTrainedBlocks = {
    {"all", TrainedBlocks::all}, {"cross_attention", TrainedBlocks::cross_attention}};
const std::vector<std::pair<std::string, Precision>> kPrecisions = {{"fp32", Precision::fp32},
                                                                    {"tf32", Precision::tf32},
                                                                    {"fp16", Precision::fp16},
                                                                    {"bf16", Precision::bf16},
                                                                    {"fp8", Precision::fp8}};
const std::vector<std::pair<std::string, Optimizer>> kOptimizers = {
    {"adamw", Optimizer::adamw},       {"adamw_8bit", Optimizer::adamw_8bit},
    {"paged_adamw_8bit", Optimizer::paged_adamw_8bit}, {"paged_adamw", Optimizer::paged_adamw}, {"adam", Optimizer::adam},
    {"sgd", Optimizer::sgd},           {"sgd_momentum", Optimizer::sgd_momentum},
    {"adafactor", Optimizer::adafactor}, {"lion", Optimizer::lion}};
const std::vector<std::pair<std::string, OptimizerImpl>> kOptimizerImpls = {
    {"foreach", OptimizerImpl::foreach}, {"fused", OptimizerImpl::fused}, {"for_loop", OptimizerImpl::for_loop}};
const std::vector<std::pair<std::string, Recompute>> kRecompute = {{"none", Recompute::none},
                                                                   {"selective", Recompute::selective},
                                                                   {"full", Recompute::full},
                                                                   {"op", Recompute::op}};
const std::vector<std::pair<std::string, Attention>> kAttention = {
    {"flash", Attention::flash}, {"sdpa", Attention::sdpa}, {"eager", Attention::eager}};
const std::vector<std::pair<std::string, LossImpl>> kLoss = {{"standard", LossImpl::standard},
                                                             {"fp32_upcast", LossImpl::fp32_upcast},
                                                             {"chunked", LossImpl::chunked},
                                                             {"fused", LossImpl::fused}};
const std::vector<std::pair<std::string, PipelineSchedule>> kSchedules = {
    {"gpipe", PipelineSchedule::gpipe}, {"1f1b", PipelineSchedule::one_f_one_b},
    {"interleaved", PipelineSchedule::interleaved}};
const std::vector<std::pair<std::string, ContextParallelExchange>> kCpExchanges = {
    {"ring", ContextParallelExchange::ring}, {"all_gather", ContextParallelExchange::all_gather},
    {"pass_kv", ContextParallelExchange::pass_kv}, {"all_to_all", ContextParallelExchange::all_to_all}};
const std::vector<std::pair<std::string, OffloadTarget>> kOffload = {
    {"none", OffloadTarget::none}, {"cpu", OffloadTarget::cpu}, {"nvme", OffloadTarget::nvme}};
const std::vector<std::pair<std::string, OffloadTarget>> kActivationOffload = {
    {"none", OffloadTarget::none}, {"cpu", OffloadTarget::cpu}, {"checkpoints", OffloadTarget::checkpoints}};
const std::vector<std::pair<std::string, QloraKernel>> kQloraKernels = {
    {"bitsandbytes", QloraKernel::bitsandbytes}, {"bitsandbytes-0.47", QloraKernel::bitsandbytes_047},
    {"torchao", QloraKernel::torchao}, {"auto-gptq", QloraKernel::auto_gptq}};
const std::vector<std::pair<std::string, WeightsMode>> kWeights = {{"mixed", WeightsMode::mixed},
                                                                   {"pure", WeightsMode::pure}};

std::string base_dir(const std::string& file) {
    fs::path p(file);
    return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

// A path inside the job file is relative to the job file's folder.
std::string relative_to(const std::string& file, const std::string& ref) {
    if (ref.empty() || ref[0] == '/') return ref;
    fs::path candidate = fs::path(base_dir(file)) / ref;
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.string();
    return ref;
}

// train.oft: PEFT's OFTConfig takes exactly one of oft_block_size and r, the other 0 (OFTConfig.__post_init__:
// "You can only specify either r ... or oft_block_size ..., but not both simultaneously, because r x oft_block_size
// == in_features"). Whether they divide each adapted linear's in_features is checked with the model (check_train).
void read_oft(const Fields& o, TrainSpec& tr) {
    o.reject_unknown(job_keys("train.oft"));
    const std::optional<int64_t> block = o.get_int("block_size", 0, 1 << 16), rank = o.get_int("rank", 0, 1 << 20);
    const int64_t b = block.value_or(0), r = rank.value_or(0);
    if (b > 0 && r > 0)
        o.fail("rank", "given with block_size: give one of the two (PEFT: r x oft_block_size = in_features, one is 0)");
    if (block && !rank && b == 0) o.fail("block_size", "0 without a rank: give block_size (PEFT default 32) or rank");
    if (rank && !block && r == 0) o.fail("rank", "0 without a block_size: give rank or block_size");
    if (block && rank && b == 0 && r == 0) o.fail("block_size", "0 and rank 0: one of the two must be set");
    tr.oft.block_size = r > 0 ? 0 : (block ? b : tr.oft.block_size);
    tr.oft.rank = r;
    if (o.has("targets")) set_lora_targets(tr.lora, o.get_string_list("targets"));
}

void read_train(const Fields& t, JobSpec& j, const FrameworkProfile& fw) {
    t.reject_unknown(job_keys("train"));
    TrainSpec& tr = j.train;
    tr.framework = fw.name;
    tr.method = choose(t, "method", kMethods, "full");
    tr.precision = choose(t, "precision", kPrecisions, "bf16");
    tr.weights = choose(t, "weights", kWeights, fw.default_weights);
    tr.optimizer = choose(t, "optimizer", kOptimizers, fw.default_optimizer);
    tr.optimizer_impl = choose(t, "optimizer_impl", kOptimizerImpls, fw.default_optimizer_impl);
    tr.optimizer_in_backward = t.get_bool("optimizer_in_backward").value_or(false);
    tr.micro_batch = t.get_int("micro_batch", 1, 1 << 20).value_or(1);
    tr.global_batch = t.get_int("global_batch", 1, 1LL << 40).value_or(0);
    auto seq = t.get_int("seq_len", 1, 1LL << 26);
    if (!seq) t.fail("seq_len", "missing (tokens per sequence)");
    tr.seq_len = *seq;
    tr.packing = t.get_bool("packing").value_or(true);
    tr.avg_seq_len = t.get_number("avg_seq_len", 1, 1e9).value_or(0);
    if (tr.avg_seq_len > double(tr.seq_len))
        t.fail("avg_seq_len", "larger than seq_len (" + std::to_string(tr.seq_len) + "): a sequence cannot hold more "
                              "real tokens than its padded length");
    tr.recompute = choose(t, "activation_checkpointing", kRecompute, fw.default_activation_checkpointing);
    // A framework whose selective AC is per-op (torchtitan) means `op` by `selective`.
    if (tr.recompute == Recompute::selective && fw.selective_recompute == "op") tr.recompute = Recompute::op;
    tr.recompute_layers = t.get_int("recompute_layers", 1, 1 << 20).value_or(0);
    if (tr.recompute_layers > 0 && tr.recompute != Recompute::full)
        t.fail("recompute_layers", "needs activation_checkpointing: full (it says how many blocks recompute)");
    tr.fp8_weights = t.get_bool("fp8_weights").value_or(false);
    if (tr.fp8_weights && tr.precision != Precision::fp8)
        t.fail("fp8_weights", "needs precision: fp8 (weights are kept in fp8 only when the matmuls run in fp8)");
    tr.activation_func_fp8_input_store = t.get_bool("activation_func_fp8_input_store").value_or(false);
    if (tr.activation_func_fp8_input_store && !fw.fused_swiglu)
        t.fail("activation_func_fp8_input_store",
               "needs a framework whose fused SwiGLU keeps its input in fp8 (Megatron-Core's bias_swiglu_impl: megatron, "
               "megatron-bridge, nemo); the " + fw.name + " profile runs an unfused SwiGLU");
    // Composer's FSDP mixed_precision PURE reduces in the compute dtype, DEFAULT in fp32 (get_mixed_precision).
    if (auto r = t.get_choice("reduce_dtype", {"fp32", "bf16", "fp16"})) tr.reduce_dtype_bytes = *r == "fp32" ? 4 : 2;
    tr.attention = choose(t, "attention", kAttention, fw.default_attention);
    tr.loss = choose(t, "loss", kLoss, fw.default_loss);
    tr.compile = t.get_bool("compile").value_or(false);
    tr.encoder = choose(t, "encoder", kEncoderTraining, "trained");
    tr.blocks = choose(t, "blocks", kTrainedBlocks, "all");

    tr.lora.dropout = fw.default_lora_dropout;
    set_lora_targets(tr.lora, fw.default_lora_targets);
    if (t.has("lora")) {
        Fields l = t.child("lora");
        l.reject_unknown(job_keys("train.lora"));
        tr.lora.rank = l.get_int("rank", 1, 1 << 16).value_or(16);
        tr.lora.alpha = l.get_number("alpha", 0, 1e9).value_or(2.0 * double(tr.lora.rank));
        tr.lora.dropout = l.get_number("dropout", 0, 0.99).value_or(tr.lora.dropout);
        if (l.has("targets")) set_lora_targets(tr.lora, l.get_string_list("targets"));
    }
    if (t.has("oft")) read_oft(t.child("oft"), tr);
    if (t.has("qlora")) {
        Fields q = t.child("qlora");
        q.reject_unknown(job_keys("train.qlora"));
        tr.qlora.bits = static_cast<int>(q.get_int("bits", 4, 8).value_or(4));
        if (tr.qlora.bits != 4 && tr.qlora.bits != 8) q.fail("bits", "must be 4 (NF4) or 8 (LLM.int8)");
        tr.qlora.double_quant = q.get_bool("double_quant").value_or(true);
        tr.qlora.kernel = choose(q, "kernel", kQloraKernels, fw.default_qlora_kernel);
    } else {
        for (const auto& [name, kernel] : kQloraKernels)
            if (name == fw.default_qlora_kernel) tr.qlora.kernel = kernel;
    }
    if (t.has("freeze")) {
        Fields fz = t.child("freeze");
        fz.reject_unknown(job_keys("train.freeze"));
        tr.freeze_trainable_layers = fz.get_int("trainable_layers", 1, 1 << 20).value_or(2);
    }
    const std::string method = to_string(tr.method);
    if (tr.method != Method::lora && tr.method != Method::qlora && t.has("lora") && tr.method != Method::freeze)
        t.fail("lora", "given, but method is '" + method + "' (use method: lora or qlora" +
                           (oft_adapters(tr.method) ? "; OFT's settings and targets go under train.oft)" : ")"));
    if (!oft_adapters(tr.method) && t.has("oft"))
        t.fail("oft", "given, but method is '" + method + "' (use method: oft or qoft)");
    if (!quantised_base(tr.method) && t.has("qlora"))
        t.fail("qlora", "given, but method is '" + method + "'");
}

void read_parallel(const Fields& p, JobSpec& j, int64_t devices, bool& dp_auto) {
    p.reject_unknown(job_keys("parallel"));
    ParallelSpec& par = j.parallel;
    par.tp = p.get_int("tp", 1, 1 << 16).value_or(1);
    par.pp = p.get_int("pp", 1, 1 << 16).value_or(1);
    par.cp = p.get_int("cp", 1, 1 << 16).value_or(1);
    par.ep = p.get_int("ep", 1, 1 << 16).value_or(1);
    dp_auto = true;
    if (const Json* dp = p.raw("dp"); dp && !(dp->is_string() && dp->get<std::string>() == "auto")) {
        par.dp = p.get_int("dp", 1, 1LL << 30).value_or(1);
        dp_auto = false;
    }
    if (dp_auto) {
        const int64_t model_parallel = par.tp * par.pp * par.cp;
        if (devices % model_parallel != 0)
            p.fail("dp", "auto: " + std::to_string(devices) + " GPUs are not divisible by tp*pp*cp = " +
                             std::to_string(model_parallel));
        par.dp = devices / model_parallel;
    }
    par.sequence_parallel = p.get_bool("sequence_parallel").value_or(false);
    par.zero = static_cast<int>(p.get_int("zero", 0, 3).value_or(0));
    par.pp_schedule = choose(p, "pp_schedule", kSchedules, "1f1b");
    par.virtual_stages = p.get_int("virtual_stages", 1, 1024).value_or(1);
    par.pp_edges_as_layers = p.get_bool("pp_edges_as_layers").value_or(false);
    par.tp_comm_overlap = p.get_bool("tp_comm_overlap").value_or(false);
    // Megatron-LM megatron/training/arguments.py validate_args: "Tensor parallel communication/GEMM overlap can happen
    // only when sequence parallelism is enabled" (NeMo 1 turns it off instead: megatron_base_model.py
    // _validate_and_override_config).
    if (par.tp_comm_overlap && !par.sequence_parallel)
        p.fail("tp_comm_overlap", "needs sequence_parallel: true (the overlapped collectives are sequence parallelism's)");
    par.cp_exchange = choose(p, "cp_exchange", kCpExchanges, to_string(par.cp_exchange));
}

void read_offload(const Fields& o, JobSpec& j) {
    o.reject_unknown(job_keys("offload"));
    j.offload.optimizer = choose(o, "optimizer", kOffload, "none");
    j.offload.params = choose(o, "params", kOffload, "none");
    // Saved activations go to host memory only (no framework streams them to NVMe).
    j.offload.activations = choose(o, "activations", kActivationOffload, to_string(j.offload.activations));
    j.offload.activation_layers = o.get_int("activation_layers", 1, 1 << 20).value_or(0);
    if (j.offload.activation_layers > 0 && j.offload.activations != OffloadTarget::cpu)
        o.fail("activation_layers", "needs activations: cpu (it says how many blocks send their saved tensors to host memory)");
}

DeviceSpec read_device_field(const Fields& h, const std::string& key, DeviceKind kind, const Catalog& cat) {
    const Json* v = h.raw(key);
    InputSite site{h.file(), h.path_of(key)};
    if (v->is_string()) return kind == DeviceKind::gpu ? cat.gpu(v->get<std::string>(), site) : cat.cpu(v->get<std::string>(), site);
    Fields g = h.child(key);
    if (!g.has("base")) return cat.read_device(g, kind);
    // A variant part: a catalog base with some fields replaced.
    const InputSite base_site{g.file(), g.path_of("base")};
    const DeviceSpec base = kind == DeviceKind::gpu ? cat.gpu(*g.get_string("base"), base_site)
                                                    : cat.cpu(*g.get_string("base"), base_site);
    DeviceSpec d = cat.read_device(g, kind, &base);
    d.name = g.get_string("name").value_or(base.name + "*");
    return d;
}

// `gpus_per_node` with a system: the job uses that many of the node's GPUs (sockets on a CPU server); the
// others idle, their idle power part of the node's base load.
void use_fewer_devices(const Fields& h, SystemSpec& s) {
    const char* what = s.cpu_only ? "sockets" : "GPUs";
    const int64_t used = *h.get_int("gpus_per_node", 1, 1024);
    if (used > s.devices_per_node)
        h.fail("gpus_per_node", "the system '" + s.name + "' has " + std::to_string(s.devices_per_node) + " " + what +
                                    " per node; give at most that (the " + what + " the job uses)");
    s.node_base_power_w += double(s.devices_per_node - used) * s.device.idle_w;
    s.devices_per_node = static_cast<int>(used);
}

void read_hardware(const Fields& h, Job& job, const Catalog& cat) {
    h.reject_unknown(job_keys("hardware"));
    SystemSpec& s = job.system;
    const int64_t nodes = h.get_int("nodes", 1, 1 << 20).value_or(1);
    if (h.has("system")) {
        if (h.has("intra_node")) h.fail("intra_node", "give either a system or a composed node (gpu, gpus_per_node, intra_node), not both");
        if (h.has("host")) h.fail("host", "give either a system or a composed node, not both");
        s = cat.system(relative_to(h.file(), *h.get_string("system")), {h.file(), h.path_of("system")});
        if (h.has("gpu")) {
            if (s.cpu_only) h.fail("gpu", "the system is a CPU-only server");
            s.device = read_device_field(h, "gpu", DeviceKind::gpu, cat);
        }
        if (h.has("gpus_per_node")) use_fewer_devices(h, s);
    } else {
        if (!h.has("gpu")) h.fail("system", "missing: name a catalog system, or compose one with gpu + gpus_per_node");
        DeviceSpec gpu = read_device_field(h, "gpu", DeviceKind::gpu, cat);
        const int64_t per_node = h.get_int("gpus_per_node", 1, 1024).value_or(1);
        LinkSpec intra;
        if (const Json* v = h.raw("intra_node"); v && v->is_string())
            intra = cat.link(v->get<std::string>(), {h.file(), h.path_of("intra_node")});
        else if (v)
            intra = cat.read_link(h.child("intra_node"));
        else
            intra = cat.link(per_node > 1 ? gpu.host_link : "none", {h.file(), h.path_of("intra_node")});
        DeviceSpec host_cpu;
        int sockets = 2;
        double host_memory = 0;
        if (h.has("host")) {
            Fields ho = h.child("host");
            ho.reject_unknown(job_keys("hardware.host"));
            if (ho.has("cpu")) host_cpu = read_device_field(ho, "cpu", DeviceKind::cpu, cat);
            sockets = static_cast<int>(ho.get_int("sockets", 1, 16).value_or(2));
            host_memory = ho.get_size_bytes("memory").value_or(0);
        }
        if (host_cpu.name.empty()) host_cpu = cat.cpu("xeon-8480", {h.file(), h.path_of("host.cpu")});
        // host_memory 0 = not stated: the report then cannot check offloaded state against host RAM and says so.
        LinkSpec host_link = cat.link(gpu.host_link, {h.file(), h.path_of("gpu.host_link")});
        LinkSpec socket_link = cat.link(host_cpu.vendor == "amd" ? "xgmi-epyc" : "upi-2.0", {h.file(), h.path_of("host.cpu")});
        s = compose_system(gpu, static_cast<int>(per_node), intra, host_link, host_cpu, sockets, socket_link);
        s.host_memory_bytes = host_memory;
        s.name = gpu.name + " x" + std::to_string(per_node);
    }
    s.nodes = static_cast<int>(nodes);
    if (h.has("inter_node")) {
        const Json* v = h.raw("inter_node");
        s.inter_node = v->is_string() ? cat.network(v->get<std::string>(), {h.file(), h.path_of("inter_node")})
                                      : cat.read_network(h.child("inter_node"));
    } else if (nodes > 1 && s.inter_node.bandwidth_GBps <= 0) {
        h.fail("inter_node", "missing: " + std::to_string(nodes) + " nodes need the fabric between them (e.g. ib-ndr-400)");
    }
}

void read_data(const Fields& d, JobSpec& j) {
    d.reject_unknown(job_keys("data"));
    j.data.tokens = d.get_number("tokens", 0, 1e18).value_or(0);
    j.data.epochs = d.get_number("epochs", 0, 1e6).value_or(1);
    j.data.max_sample_tokens = d.get_int("max_sample_tokens", 1, 1LL << 26).value_or(0);
    if (j.data.max_sample_tokens > 0 && double(j.data.max_sample_tokens) < j.train.avg_seq_len)
        d.fail("max_sample_tokens", "shorter than train.avg_seq_len (" + fmt::format("{:g}", j.train.avg_seq_len) +
                                        "): the longest sample cannot hold fewer tokens than the average one");
}

// A storage tier by name (data/storage/; `nvme` is the node's own drives, `local-nvme`), or a mapping with a tier
// and/or figures: {tier, write_GBps, read_GBps (per node), aggregate_write_GBps, aggregate_read_GBps}.
StorageChoice read_storage_choice(const Fields& o, const std::string& key) {
    StorageChoice c;
    std::vector<std::string> tiers = {"nvme", "nfs", "object-store"};
    for (const auto& n : Catalog::instance().names("storage"))
        if (std::find(tiers.begin(), tiers.end(), n) == tiers.end()) tiers.push_back(n);
    auto tier_name = [](const std::string& n) { return n == "nvme" ? std::string("local-nvme") : n; };
    if (o.raw(key)->is_string()) {
        c.tier = tier_name(*o.get_choice(key, tiers));
        return c;
    }
    const Fields f = o.child(key);
    f.reject_unknown(job_keys("ops." + key));
    if (f.has("tier")) c.tier = tier_name(*f.get_choice("tier", tiers));
    c.write_GBps_per_node = f.get_number("write_GBps", 1e-6, 1e6);
    c.read_GBps_per_node = f.get_number("read_GBps", 1e-6, 1e6);
    c.aggregate_write_GBps = f.get_number("aggregate_write_GBps", 1e-6, 1e9);
    c.aggregate_read_GBps = f.get_number("aggregate_read_GBps", 1e-6, 1e9);
    if (c.tier.empty() && !c.write_GBps_per_node)
        f.fail("write_GBps", "missing: give the per-node write rate, or name a tier (tier: nfs)");
    return c;
}

void read_ops(const Fields& o, JobSpec& j) {
    o.reject_unknown(job_keys("ops"));
    if (auto p = o.get_number("price_per_gpu_hour", 0, 1e6)) j.ops.price_per_gpu_hour = *p;
    if (auto p = o.get_number("price_per_node_hour", 0, 1e7)) j.ops.price_per_node_hour = *p;
    j.ops.electricity_per_kwh = o.get_number("electricity_per_kwh", 0, 100).value_or(j.ops.electricity_per_kwh);
    j.ops.pue = o.get_number("pue", 1, 5).value_or(j.ops.pue);
    if (o.has("checkpoint_storage")) j.ops.checkpoint_storage = read_storage_choice(o, "checkpoint_storage");
    if (o.has("data_storage")) j.ops.data_storage = read_storage_choice(o, "data_storage");
    if (auto f = o.get_number("failures_per_gpu_hour", 0, 1)) j.ops.failures_per_gpu_hour = *f;
    j.ops.restart_seconds = o.get_number("restart_seconds", 0, 1e7).value_or(0);
}

// global_batch, or gradient_accumulation steps of micro_batch x dp (what trainer configs state), or one step.
void resolve_global_batch(const Fields& t, JobSpec& j) {
    const int64_t per_step = j.train.micro_batch * j.parallel.dp;
    const auto accumulation = t.get_int("gradient_accumulation", 1, 1 << 24);
    if (!accumulation) {
        if (j.train.global_batch == 0) j.train.global_batch = per_step;
        return;
    }
    if (j.train.global_batch != 0 && j.train.global_batch != per_step * *accumulation)
        t.fail("gradient_accumulation", std::to_string(*accumulation) + " steps of micro_batch*dp = " + std::to_string(per_step) +
                                            " make " + std::to_string(per_step * *accumulation) + " sequences, but global_batch is " +
                                            std::to_string(j.train.global_batch) + "; give one of the two");
    j.train.global_batch = per_step * *accumulation;
}

bool targets_exist(const std::string& t) { return t == "lm_head" || lora_target_bits(t) != 0; }

const char* format_name(WeightFormat f) {
    return f == WeightFormat::awq ? "AWQ" : f == WeightFormat::gptq ? "GPTQ" : "NVFP4";
}

// A pre-quantised checkpoint (the model's quantization_config): its block linears stay in their format, frozen, and
// the job trains adapters over them, the way QLoRA does over a base quantised on load. Full training is refused:
// transformers' Trainer raises "You cannot perform fine-tuning on purely quantized models. Please attach trainable
// adapters on top of the quantized model" (src/transformers/trainer.py, Trainer.__init__, _is_quantized_and_base_model).
void apply_quantized_checkpoint(const Fields& t, Job& job) {
    const QuantizedWeights& q = job.model.quantized;
    if (q.format == WeightFormat::none) return;
    TrainSpec& tr = job.spec.train;
    const std::string what = std::string("the model's weights are pre-quantised (") + format_name(q.format) + " " +
                             std::to_string(q.bits) + "-bit, quantization_config)";
    if (tr.method == Method::full || tr.method == Method::freeze)
        t.fail("method", "'" + std::string(to_string(tr.method)) + "': " + what +
                             " and cannot train; use method: lora or oft (adapters over the quantised base)");
    if (t.has("qlora") && t.child("qlora").has("kernel"))
        t.fail("qlora.kernel", what + "; their format sets the kernel, leave kernel out");
    tr.method = oft_adapters(tr.method) ? Method::qoft : Method::qlora;
    tr.qlora.bits = q.bits;
    tr.qlora.group_size = q.group_size;
    tr.qlora.kernel = q.format == WeightFormat::awq    ? QloraKernel::awq
                      : q.format == WeightFormat::gptq ? QloraKernel::auto_gptq
                                                       : QloraKernel::modelopt_nvfp4;
}

}  // namespace

Job job_from_document(const Json& doc, const std::string& file) {
    Fields root(doc, file, "");
    root.reject_unknown(job_keys(""));
    const Catalog& cat = Catalog::instance();
    Job job;
    job.spec.file = file;

    // Framework first: it supplies defaults for the train section.
    std::string fw = "generic";
    if (root.has("train")) {
        Fields t = root.child("train");
        fw = t.get_string("framework").value_or("generic");
        job.framework = load_framework(fw, file, "train.framework");
        for (const auto& [name, exchange] : kCpExchanges)
            if (job.framework.context_parallel_exchange == name) job.spec.parallel.cp_exchange = exchange;
    } else {
        root.fail("train", "missing (at least train.seq_len)");
    }

    const Json* m = root.raw("model");
    if (!m) root.fail("model", "missing: a catalog name, a config.json path or an inline mapping");
    if (m->is_string()) job.model = cat.model(relative_to(file, m->get<std::string>()), {file, "model"});
    else job.model = model_from_hf_config(root.child("model"), "inline model");

    read_train(root.child("train"), job.spec, job.framework);
    apply_quantized_checkpoint(root.child("train"), job);
    if (!root.has("hardware")) root.fail("hardware", "missing: name a system or compose one (gpu, gpus_per_node)");
    read_hardware(root.child("hardware"), job, cat);
    bool dp_auto = true;
    const int64_t devices = job.system.total_devices();
    if (root.has("parallel")) read_parallel(root.child("parallel"), job.spec, devices, dp_auto);
    else job.spec.parallel.dp = devices;
    // The framework's activation offload applies to recompute checkpoints only when blocks are recomputed.
    const std::string& offload_default = job.framework.default_activation_offload;
    if (offload_default == "cpu") job.spec.offload.activations = OffloadTarget::cpu;
    else if (offload_default == "checkpoints" && job.spec.train.recompute == Recompute::full)
        job.spec.offload.activations = OffloadTarget::checkpoints;
    if (root.has("offload")) read_offload(root.child("offload"), job.spec);
    if (root.has("data")) read_data(root.child("data"), job.spec);
    if (root.has("ops")) read_ops(root.child("ops"), job.spec);
    resolve_global_batch(root.child("train"), job.spec);
    check_job(job);
    return job;
}

namespace {

// The degrees fit the hardware: each at most the GPU count, their product exactly it.
void check_parallel_degrees(const Job& job) {
    const ParallelSpec& p = job.spec.parallel;
    const std::string& file = job.spec.file;
    const int64_t devices = job.system.total_devices();
    // Each degree is at most the GPU count, so the product cannot overflow when it matters.
    for (auto [name, v] : {std::pair{"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}, {"dp", p.dp}})
        if (v > devices)
            throw InputError(file, std::string("parallel.") + name,
                             std::string(name) + "=" + std::to_string(v) + " exceeds the " + std::to_string(devices) + " GPUs");
    const int64_t product = p.tp * p.pp * p.cp * p.dp;
    if (product != devices)
        throw InputError(file, "parallel", "tp*pp*cp*dp = " + std::to_string(p.tp) + "*" + std::to_string(p.pp) + "*" +
                                               std::to_string(p.cp) + "*" + std::to_string(p.dp) + " = " +
                                               std::to_string(product) + ", but the hardware has " +
                                               std::to_string(devices) + " GPUs");
}

void check_expert_parallel(const Job& job) {
    const ParallelSpec& p = job.spec.parallel;
    const ModelSpec& m = job.model;
    const std::string& file = job.spec.file;
    if (!m.is_moe()) throw InputError(file, "parallel.ep", "ep>1 needs a mixture-of-experts model");
    int64_t experts = 0;
    for (const auto& l : m.layers) experts = std::max(experts, l.experts);
    if (experts % p.ep != 0)
        throw InputError(file, "parallel.ep", "ep=" + std::to_string(p.ep) + " does not divide the " +
                                                  std::to_string(experts) + " experts");
    if ((p.dp * p.cp) % p.ep != 0)
        throw InputError(file, "parallel.ep", "ep=" + std::to_string(p.ep) + " must divide dp*cp = " +
                                                  std::to_string(p.dp * p.cp));
}

// An all-to-all exchange hands each context-parallel rank whole heads of the tensor-parallel shard, of q and of k/v
// alike (Transformer Engine AttnFuncWithCPAndQKVOA2A: "The number of attention heads needs to be divisible by CP
// size!"; DeepSpeed-Ulysses likewise).
void check_all_to_all_heads(const Job& job) {
    const ParallelSpec& p = job.spec.parallel;
    const int64_t split = p.tp * p.cp;
    for (const LayerSpec& l : job.model.layers) {
        if (!l.has_attention()) continue;
        const int64_t kv = l.kv_heads > 0 ? l.kv_heads : l.heads;
        if (l.heads % split == 0 && kv % split == 0) continue;
        throw InputError(job.spec.file, "parallel.cp_exchange",
                         "all_to_all gives each of tp*cp = " + std::to_string(split) + " ranks whole heads, but the " +
                             std::to_string(l.heads) + " query heads or " + std::to_string(kv) +
                             " key/value heads do not divide by it; use ring or all_gather");
    }
}

// The model splits the way the layout asks: heads, FFN width and layers divide by the degrees.
void check_model_split(const Job& job) {
    const JobSpec& j = job.spec;
    const ParallelSpec& p = j.parallel;
    const ModelSpec& m = job.model;
    const std::string& file = j.file;
    const LayerSpec& l0 = m.layers.front();
    if (l0.heads % p.tp != 0)
        throw InputError(file, "parallel.tp", "tp=" + std::to_string(p.tp) + " does not divide the " +
                                                  std::to_string(l0.heads) + " attention heads");
    if (l0.kv_heads % p.tp != 0 && p.tp % l0.kv_heads != 0)
        throw InputError(file, "parallel.tp", "tp=" + std::to_string(p.tp) + " and the " +
                                                  std::to_string(l0.kv_heads) +
                                                  " key/value heads: neither divides the other");
    if (p.tp > 1 && l0.ffn_intermediate % p.tp != 0)
        throw InputError(file, "parallel.tp", "tp=" + std::to_string(p.tp) + " does not divide the FFN width " +
                                                  std::to_string(l0.ffn_intermediate));
    if (p.pp > static_cast<int64_t>(m.num_layers()))
        throw InputError(file, "parallel.pp", "pp=" + std::to_string(p.pp) + " exceeds the " +
                                                  std::to_string(m.num_layers()) + " layers");
    // With pp_edges_as_layers the embedding and the head each fill one model chunk of their own.
    const int64_t split_units = static_cast<int64_t>(m.num_layers()) + (p.pp_edges_as_layers && p.pp > 1 ? 2 : 0);
    if (p.pp_schedule == PipelineSchedule::interleaved && p.virtual_stages > 1 && split_units < p.pp * p.virtual_stages)
        throw InputError(file, "parallel.virtual_stages",
                         "pp*virtual_stages = " + std::to_string(p.pp * p.virtual_stages) +
                             " exceeds the layer count (" + std::to_string(split_units) +
                             (p.pp_edges_as_layers ? " with the embedding and the head)" : ")"));
    if (j.train.seq_len % p.cp != 0)
        throw InputError(file, "parallel.cp", "cp=" + std::to_string(p.cp) + " does not divide seq_len " +
                                                  std::to_string(j.train.seq_len));
    if (p.cp > 1 && p.cp_exchange == ContextParallelExchange::all_to_all) check_all_to_all_heads(job);
    if (p.ep > 1) check_expert_parallel(job);
    if (p.sequence_parallel && p.tp == 1)
        throw InputError(file, "parallel.sequence_parallel", "needs tp > 1");
}

void check_lora_targets(const JobSpec& j) {
    const std::string& file = j.file;
    const std::string field = oft_adapters(j.train.method) ? "train.oft.targets" : "train.lora.targets";
    for (const auto& t : j.train.lora.targets)
        if (!targets_exist(t)) {
            const std::vector<std::string> names = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                    "down_proj", "query_key_value", "dense", "dense_h_to_4h",
                                                    "dense_4h_to_h", "c_attn", "c_proj", "c_fc", "Wqkv", "out_proj",
                                                    "fc1", "fc2", "q", "k", "v", "o", "wi", "wi_0", "wi_1", "wo",
                                                    "w1", "w2", "w3", "qkv_proj", "gate_up_proj", "lm_head"};
            std::string hint = did_you_mean(t, names);
            throw InputError(file, field,
                             "'" + t + "' is not a linear layer name" +
                                 (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                                 "; use the model's HuggingFace module names (q_proj, v_proj, query_key_value, "
                                 "wi_0, ...) or all-linear");
        }
}

// train.blocks and train.encoder: adapters need the model parts they name.
void check_trained_parts(const Job& job) {
    const TrainSpec& t = job.spec.train;
    const ModelSpec& m = job.model;
    const std::string& file = job.spec.file;
    const bool adapters = t.method == Method::lora || t.method == Method::qlora;
    if (t.blocks == TrainedBlocks::cross_attention) {
        if (std::none_of(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) { return l.attends_encoder; }))
            throw InputError(file, "train.blocks", "cross_attention: " + m.name + " has no blocks that attend to an "
                                                   "encoder (mllama's cross-attention layers); use all");
        if (t.method == Method::freeze)
            throw InputError(file, "train.blocks", "cross_attention with method freeze: choose one (freeze trains the "
                                                   "last blocks)");
        // The CPU heap replay (cpu_step_heap) trains every parameter or none of a block's weights: no per-block split.
        if (job.system.cpu_only)
            throw InputError(file, "train.blocks", "cross_attention is not modelled on a CPU server; use all");
        if (adapters && std::find(t.lora.targets.begin(), t.lora.targets.end(), "lm_head") != t.lora.targets.end())
            throw InputError(file, "train.lora.targets", "lm_head with train.blocks: cross_attention: the head is "
                                                         "outside the trained blocks and keeps no adapter");
    }
    if (t.encoder != EncoderTraining::adapters) return;
    if (!adapters)
        throw InputError(file, "train.encoder", std::string("adapters needs method lora or qlora, not ") + to_string(t.method));
    if (!m.encoder.present())
        throw InputError(file, "train.encoder", "adapters: " + m.name + " has no vision or audio encoder");
    if (m.encoder.intermediate <= 0)
        throw InputError(file, "train.encoder", "adapters: the block layout of " + m.name + "'s " + m.encoder.kind +
                                                    " encoder is not described; use trained, projector or frozen");
}

// The divisor of in_features PEFT takes for a block size or rank that does not divide it (OFTLayer.
// adjust_oft_parameters, v0.18.1): all of in_features when asked for more; else the nearer of the divisors just
// below and just above, the lower one on a tie.
int64_t peft_adjusted_oft_parameter(int64_t in, int64_t asked) {
    if (asked >= in) return in;
    int64_t higher = asked, lower = asked;
    while (higher <= in && in % higher != 0) ++higher;
    while (lower > 1 && in % lower != 0) --lower;
    return asked - lower <= higher - asked ? lower : higher;
}

// Every adapted linear's in_features must split into OFT's blocks. PEFT would not refuse: OFTLayer.update_layer
// moves a block size (or rank) that does not divide to the nearest divisor with a warning
// (adjust_oft_parameters); the plan refuses instead and names the size PEFT would take.
void check_oft_blocks(const Job& job) {
    const OftConfig& oft = job.spec.train.oft;
    // The CPU step's heap replay (memory/cpu_step_heap) knows LoRA's allocations, not OFT's.
    if (job.system.cpu_only)
        throw InputError(job.spec.file, "train.method", std::string(to_string(job.spec.train.method)) +
                                                            ": OFT on a CPU is not modelled (the CPU step replays LoRA's "
                                                            "allocations only)");
    const TrainingSetup set = derive_setup(job);
    const bool by_block = oft.block_size > 0;
    const int64_t asked = by_block ? oft.block_size : oft.rank;
    auto check = [&](int64_t in) {
        if (oft_block_size_for(oft, in) > 0) return;
        const std::string what = by_block ? "block_size" : "rank";
        throw InputError(job.spec.file, "train.oft." + what,
                         std::to_string(asked) + " does not divide an adapted linear's " + std::to_string(in) +
                             " input features (PEFT needs r x oft_block_size = in_features; it would adjust the " +
                             what + " to " + std::to_string(peft_adjusted_oft_parameter(in, asked)) + " with a warning)");
    };
    for (const LayerSpec& l : job.model.layers)
        for (const AdaptedInput& a : adapted_inputs(l, set.lora_mask, set.fused_qkv)) check(a.in_features);
    if (set.lora_on_head) check(job.model.hidden);
}

void check_train(const Job& job) {
    const JobSpec& j = job.spec;
    const ParallelSpec& p = j.parallel;
    const ModelSpec& m = job.model;
    const std::string& file = j.file;
    if (j.train.global_batch % (j.train.micro_batch * p.dp) != 0)
        throw InputError(file, "train.global_batch",
                         std::to_string(j.train.global_batch) + " is not a multiple of micro_batch*dp = " +
                             std::to_string(j.train.micro_batch * p.dp));
    if (trains_adapters(j.train.method)) check_lora_targets(j);
    if (oft_adapters(j.train.method)) check_oft_blocks(job);
    check_trained_parts(job);
    if (j.train.method == Method::freeze && j.train.freeze_trainable_layers > static_cast<int64_t>(m.num_layers()))
        throw InputError(file, "train.freeze.trainable_layers", "more than the model's " +
                                                                    std::to_string(m.num_layers()) + " layers");
    if (j.train.activation_func_fp8_input_store && !has_swiglu_ffn(m))
        throw InputError(file, "train.activation_func_fp8_input_store",
                         "has no effect: " + m.name + " has no SwiGLU FFN (SiLU-gated), the only activation whose input "
                         "Megatron-Core stores in fp8");
    if (j.train.precision == Precision::fp8 && job.system.device.peak_tflops.fp8 <= 0)
        throw InputError(file, "train.precision", "fp8: the " + job.system.device.name + " has no fp8 tensor cores");
    // A CPU without bf16 units still runs bf16 (PyTorch computes it in fp32: ATen cpublas::gemm's fallback,
    // aten/src/ATen/native/CPUBlas.cpp), slowly: planned at its bf16 rate where probed, else as fp32 (rates.cpp runs_as).
    if (j.train.precision == Precision::bf16 && job.system.device.peak_tflops.bf16 <= 0 && !job.system.cpu_only)
        throw InputError(file, "train.precision", "bf16: the " + job.system.device.name + " has no bf16 support");
}

void check_offload_and_recompute(const Job& job) {
    const JobSpec& j = job.spec;
    const ParallelSpec& p = j.parallel;
    const ModelSpec& m = job.model;
    const std::string& file = j.file;
    if (j.offload.params != OffloadTarget::none && p.zero != 3)
        throw InputError(file, "offload.params", "parameter offload needs ZeRO-3 (parallel.zero: 3)");
    if (j.offload.activations == OffloadTarget::checkpoints && j.train.recompute != Recompute::full)
        throw InputError(file, "offload.activations",
                         "checkpoints: only recomputed blocks have checkpoints (set train.activation_checkpointing: full)");
    const int64_t blocks_per_stage = (static_cast<int64_t>(m.num_layers()) + p.pp - 1) / p.pp;
    if (j.train.recompute_layers > blocks_per_stage)
        throw InputError(file, "train.recompute_layers", std::to_string(j.train.recompute_layers) + " is more than the " +
                                                              std::to_string(blocks_per_stage) + " blocks of a pipeline stage");
    if (j.offload.activation_layers > blocks_per_stage)
        throw InputError(file, "offload.activation_layers", std::to_string(j.offload.activation_layers) +
                                                                " is more than the " + std::to_string(blocks_per_stage) +
                                                                " blocks of a pipeline stage");
    if (job.system.cpu_only && (p.tp > 1 || p.pp > 1 || p.cp > 1))
        throw InputError(file, "parallel", "a CPU server runs data parallel only (tp, pp, cp must be 1)");
}

}  // namespace

// Megatron-Core fuses and stores in fp8 only a SiLU-gated FFN (megatron/core/transformer/mlp.py: bias_swiglu_impl when
// activation_func is F.silu with gated_linear_unit).
bool has_swiglu_ffn(const ModelSpec& m) {
    const bool silu = m.activation == "silu" || m.activation == "swish";
    for (const LayerSpec& l : m.layers)
        if (l.ffn_intermediate > 0 && l.ffn_kind == FfnKind::gated && silu) return true;
    return false;
}

void check_job(const Job& job) {
    check_parallel_degrees(job);
    check_model_split(job);
    check_train(job);
    check_offload_and_recompute(job);
}

const char* to_string(Method v) {
    switch (v) {
        case Method::full: return "full";
        case Method::lora: return "lora";
        case Method::qlora: return "qlora";
        case Method::freeze: return "freeze";
        case Method::oft: return "oft";
        case Method::qoft: return "qoft";
    }
    return "?";
}
const char* to_string(EncoderTraining v) {
    return v == EncoderTraining::trained     ? "trained"
           : v == EncoderTraining::projector ? "projector"
           : v == EncoderTraining::frozen    ? "frozen"
                                             : "adapters";
}
const char* to_string(TrainedBlocks v) { return v == TrainedBlocks::all ? "all" : "cross_attention"; }
const char* to_string(Precision v) {
    switch (v) {
        case Precision::fp32: return "fp32";
        case Precision::tf32: return "tf32";
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::fp8: return "fp8";
    }
    return "?";
}
const char* to_string(Optimizer v) {
    for (auto& [n, e] : kOptimizers)
        if (e == v) return n.c_str();
    return "?";
}
const char* to_string(Recompute v) {
    for (auto& [n, e] : kRecompute)
        if (e == v) return n.c_str();
    return "?";
}
const char* to_string(OptimizerImpl v) {
    for (auto& [n, e] : kOptimizerImpls)
        if (e == v) return n.c_str();
    return "?";
}
const char* to_string(Attention v) { return v == Attention::flash ? "flash" : v == Attention::sdpa ? "sdpa" : "eager"; }
const char* to_string(LossImpl v) {
    for (auto& [n, e] : kLoss)
        if (e == v) return n.c_str();
    return "?";
}
const char* to_string(PipelineSchedule v) {
    return v == PipelineSchedule::gpipe ? "gpipe" : v == PipelineSchedule::one_f_one_b ? "1f1b" : "interleaved";
}
const char* to_string(ContextParallelExchange v) {
    if (v == ContextParallelExchange::pass_kv) return "pass_kv";
    if (v == ContextParallelExchange::all_to_all) return "all_to_all";
    return v == ContextParallelExchange::ring ? "ring" : "all_gather";
}
const char* to_string(OffloadTarget v) {
    switch (v) {
        case OffloadTarget::none: return "none";
        case OffloadTarget::cpu: return "cpu";
        case OffloadTarget::nvme: return "nvme";
        case OffloadTarget::checkpoints: return "checkpoints";
    }
    return "?";
}

Json job_document(const std::string& text, const std::string& file) {
    Json doc = parse_yaml_text(text, file);
    if (!doc.is_object()) throw InputError(file, "", "the job file must be a mapping (model, train, hardware, ...)");
    return doc;
}

Job load_job(const std::string& path, const std::vector<std::string>& overrides) {
    Json doc = job_document(read_text_file(path, "file"), path);
    for (const auto& o : overrides) apply_override(doc, o, path);
    return job_from_document(doc, path, overrides);
}

Job job_from_document(const Json& doc, const std::string& file, const std::vector<std::string>& overrides) {
    try {
        return job_from_document(doc, file);
    } catch (const InputError& e) {
        // The --set that gave the field: the one with the longest key above it (model={...} then model.x=1: the second).
        const std::string* given = nullptr;
        size_t longest = 0;
        for (const auto& o : overrides) {
            const std::string key = o.substr(0, o.find('='));
            const bool above = e.field() == key || e.field().rfind(key + ".", 0) == 0 || e.field().rfind(key + "[", 0) == 0;
            if (above && key.size() >= longest) given = &o, longest = key.size();
        }
        if (given) throw InputError("--set " + *given, e.field(), e.reason());
        throw;
    }
}

}  // namespace ftb
