// One adapter alone (timing/adapter_work.hpp), counted by hand on the tiny Llama of plan_test_util.hpp (hidden 64)
// on one H100 SXM: LoRA rank r on a 64 x 128 linear, 8 tokens.
#include <gtest/gtest.h>

#include "timing/adapter_work.hpp"
#include "work_test_util.hpp"

namespace ftb {
namespace {

using plan_test::BuiltWork;
using plan_test::build_work;

TEST(TimingAdapterWork, LoraRunsTwoGemmsForwardAndFourBackward) {
    const BuiltWork b = build_work({{"train.method", "lora"}, {"train.lora.rank", "4"}});
    const WorkContext c = b.work();
    LayerWork w;
    add_adapter_work(w, c, 8, 64, 128, 1, c.act_bytes, false);
    // Forward x A (8 x 4 x 64) and (xA) B (8 x 128 x 4); backward each operand's gradient of both: 2 flops per MAC.
    const double macs = 8.0 * 4 * 64 + 8.0 * 128 * 4;
    EXPECT_DOUBLE_EQ(w.forward.flops, 2 * macs);
    EXPECT_DOUBLE_EQ(w.backward.flops, 4 * macs);
    EXPECT_DOUBLE_EQ(w.forward.kernels, 2);
    EXPECT_DOUBLE_EQ(w.backward.kernels, 4);
}

TEST(TimingAdapterWork, ElementwiseKernelsOnlyWhereAsked) {
    const BuiltWork b = build_work({{"train.method", "lora"}, {"train.lora.rank", "4"}});
    const WorkContext c = b.work();
    LayerWork gemms_only, with_elementwise;
    add_adapter_work(gemms_only, c, 8, 64, 128, 1, c.act_bytes, false);
    add_adapter_work(with_elementwise, c, 8, 64, 128, 1, c.act_bytes, true);
    // Eager: dropout, scaling and add are 3 kernels forward and 4 backward beside the GEMMs.
    EXPECT_DOUBLE_EQ(with_elementwise.forward.kernels - gemms_only.forward.kernels, 3);
    EXPECT_DOUBLE_EQ(with_elementwise.backward.kernels - gemms_only.backward.kernels, 4);
    EXPECT_GT(with_elementwise.forward.memory_s, gemms_only.forward.memory_s);
    EXPECT_DOUBLE_EQ(with_elementwise.forward.flops, gemms_only.forward.flops);
}

}  // namespace
}  // namespace ftb
