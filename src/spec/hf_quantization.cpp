// A pre-quantised checkpoint's weight format, from config.json `quantization_config` (hf_family.hpp). Field names
// and defaults follow transformers' quantisation configs (src/transformers/utils/quantization_config.py: AwqConfig
// bits 4, group_size 128, version "gemm"; GPTQConfig bits, group_size 128) and ModelOpt's export (quant_method
// "modelopt", quant_algo "NVFP4", group_size 16).
#include <string>

#include "spec/hf_family.hpp"

namespace ftb::hf {
namespace {

// A group size that divides nothing (-1: one group per output column) has no per-weight figure here.
int64_t group_of(const Fields& q, std::initializer_list<const char*> keys, int64_t dflt) {
    for (const char* k : keys)
        if (q.has(k)) {
            const int64_t g = *q.get_int(k, -1, kMaxDim);
            if (g <= 0) q.fail(k, "a group size of " + std::to_string(g) + " (one group per column) is not modelled; give the group size");
            return g;
        }
    return dflt;
}

QuantizedWeights read_awq(const Fields& q) {
    QuantizedWeights w;
    w.format = WeightFormat::awq;
    // AutoAWQ's WQLinear_GEMM refuses other widths ("Only 4-bit are supported for now.", awq/modules/linear/gemm.py).
    w.bits = static_cast<int>(opt_int(q, {"bits", "w_bit"}, 4, 1, 64));
    if (w.bits != 4) q.fail(q.has("bits") ? "bits" : "w_bit", "AutoAWQ's GEMM kernel packs 4-bit weights only");
    w.group_size = group_of(q, {"group_size", "q_group_size"}, 128);
    const std::string version = q.get_string("version").value_or("gemm");
    if (version != "gemm" && version != "GEMM")
        q.fail("version", "'" + version + "': only AutoAWQ's GEMM packing is modelled (the training path)");
    return w;
}

QuantizedWeights read_gptq(const Fields& q) {
    QuantizedWeights w;
    w.format = WeightFormat::gptq;
    w.bits = static_cast<int>(opt_int(q, {"bits"}, 4, 1, 64));
    // The dequantisation measured and modelled (timing/qlora_dequant.cpp) is auto-gptq's 4-bit one.
    if (w.bits != 4) q.fail("bits", std::to_string(w.bits) + "-bit GPTQ: only 4-bit GPTQ is modelled");
    w.group_size = group_of(q, {"group_size"}, 128);
    return w;
}

QuantizedWeights read_modelopt(const Fields& q) {
    const std::string algo = q.get_string("quant_algo").value_or("");
    if (algo != "NVFP4")
        q.fail("quant_algo", "'" + algo + "': of ModelOpt's formats only NVFP4 is modelled");
    QuantizedWeights w;
    w.format = WeightFormat::nvfp4;
    w.bits = 4;
    w.group_size = group_of(q, {"group_size"}, 16);
    return w;
}

}  // namespace

QuantizedWeights read_quantization_config(const Fields& f) {
    if (!f.has("quantization_config")) return {};
    const Fields q = f.child("quantization_config");
    const std::string method = q.get_string("quant_method").value_or("");
    if (method == "awq") return read_awq(q);
    if (method == "gptq") return read_gptq(q);
    if (method == "modelopt" || method == "modelopt_fp4") return read_modelopt(q);
    // Block-wise fp8 checkpoints (DeepSeek-V3's quant_method "fp8") are planned as before this reader: as the
    // unquantised model in the job's dtype.
    if (method == "fp8") return {};
    // gpt-oss ships its experts in MXFP4; transformers' Mxfp4HfQuantizer trains only a dequantised model
    // (Mxfp4Config(dequantize=True), the path OpenAI's gpt-oss fine-tuning recipe takes), so it plans as bf16.
    if (method == "mxfp4") return {};
    q.fail("quant_method", "'" + method + "' is not modelled (awq, gptq and modelopt NVFP4 are)");
}

}  // namespace ftb::hf
