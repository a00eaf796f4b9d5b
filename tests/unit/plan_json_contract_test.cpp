// `ftbound plan JOB --json` against CONTRACT.md "plan --json: the keys that must be there": every key present
// with the right type, step.breakdown summing to step.seconds, resources only from the vocabulary, no NaN,
// nulls only where the contract allows them. Runs the real binary on the example jobs and the test jobs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "plan_test_util.hpp"
#include "spec_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;
using spec_test::describe;
using spec_test::run_ftbound;

Json plan_json(const std::vector<std::string>& args) {
    std::vector<std::string> full{"plan"};
    full.insert(full.end(), args.begin(), args.end());
    full.push_back("--json");
    const auto r = run_ftbound(full);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(r.err.empty()) << r.err;
    if (r.exit_code != 0) return Json();
    // Exactly one JSON document: parse the whole of stdout.
    try {
        return Json::parse(r.out);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "stdout is not one JSON document: " << e.what() << "\n" << r.out.substr(0, 400);
        return Json();
    }
}

void check_contract(const Json& j, const std::string& job) {
    SCOPED_TRACE(job);
    ASSERT_TRUE(j.is_object());
    for (const char* k : {"memory.allocated_peak_bytes", "memory.reserved_peak_bytes", "memory.device_used_bytes",
                          "memory.capacity_bytes", "memory.host_bytes", "memory.breakdown.weights",
                          "memory.breakdown.gradients", "memory.breakdown.optimizer", "memory.breakdown.activations",
                          "memory.breakdown.logits", "memory.breakdown.temporary", "memory.breakdown.overhead",
                          "limits.max_micro_batch", "limits.max_seq_len", "step.seconds",
                          "throughput.tokens_per_second", "throughput.tokens_per_second_per_gpu", "throughput.mfu",
                          "throughput.mfu_6n", "throughput.hfu", "bottleneck.share", "reliability.checkpoint_interval_seconds"})
        expect_number(j, k);
    // Job-level reliability needs the job's length (data.tokens): null without it, numbers with it.
    const bool has_length = j["time_to_train_seconds"].is_number();
    for (const char* k : {"expected_interruptions", "goodput"})
        EXPECT_EQ(j["reliability"][k].is_number(), has_length) << k;
    ASSERT_TRUE(j["memory"]["fits"].is_boolean());
    EXPECT_TRUE(j["limits"]["max_micro_batch"].is_number_integer());
    EXPECT_TRUE(j["limits"]["max_seq_len"].is_number_integer());
    EXPECT_GE(j["limits"]["max_micro_batch"].get<int64_t>(), 0);
    EXPECT_GE(j["limits"]["max_seq_len"].get<int64_t>(), 0);

    const Json& m = j["memory"];
    // fits is false only for does_not_fit; the band holds the figure and is at most ±10% of it; the margin
    // is what is left of the capacity; the three memory figures nest.
    const std::string verdict = m["verdict"].get<std::string>();
    EXPECT_TRUE(verdict == "fits" || verdict == "tight" || verdict == "does_not_fit") << verdict;
    EXPECT_EQ(m["fits"].get<bool>(), verdict != "does_not_fit");
    const double used = m["device_used_bytes"].get<double>(), capacity = m["capacity_bytes"].get<double>();
    ASSERT_EQ(m["band_bytes"].size(), 2u);
    const double low = m["band_bytes"][0].get<double>(), high = m["band_bytes"][1].get<double>();
    EXPECT_LE(low, used);
    EXPECT_GE(high, used);
    // The JSON prints whole bytes: a band edge at exactly ±10% may round by up to one byte.
    EXPECT_GE(low, used * 0.9 - 1);
    EXPECT_LE(high, used * 1.1 + 1);
    EXPECT_DOUBLE_EQ(m["margin_bytes"].get<double>(), capacity - used);
    EXPECT_EQ(verdict == "fits", high < capacity);
    EXPECT_EQ(verdict == "does_not_fit", low > capacity);
    EXPECT_LE(m["allocated_peak_bytes"].get<double>(), m["reserved_peak_bytes"].get<double>());
    EXPECT_LE(m["reserved_peak_bytes"].get<double>(), m["device_used_bytes"].get<double>());
    double parts = 0;
    for (const char* k : {"weights", "gradients", "optimizer", "activations", "logits", "temporary"}) {
        EXPECT_GE(m["breakdown"][k].get<double>(), 0) << k;
        parts += m["breakdown"][k].get<double>();
    }
    EXPECT_NEAR(parts, m["allocated_peak_bytes"].get<double>(), 1e-6 * parts);
    EXPECT_NEAR(parts + m["breakdown"]["overhead"].get<double>(), m["device_used_bytes"].get<double>(), 1e-6 * parts);

    // step.breakdown: {phase, seconds, resource}, summing to step.seconds.
    const double step = j["step"]["seconds"].get<double>();
    EXPECT_GT(step, 0);
    ASSERT_TRUE(j["step"]["breakdown"].is_array());
    ASSERT_FALSE(j["step"]["breakdown"].empty());
    double sum = 0;
    for (const Json& p : j["step"]["breakdown"]) {
        ASSERT_TRUE(p.contains("phase") && p["phase"].is_string()) << p.dump();
        ASSERT_TRUE(p.contains("seconds") && p["seconds"].is_number()) << p.dump();
        ASSERT_TRUE(p.contains("resource") && p["resource"].is_string()) << p.dump();
        EXPECT_TRUE(in_vocabulary(p["resource"].get<std::string>())) << p.dump();
        EXPECT_GE(p["seconds"].get<double>(), 0) << p.dump();
        sum += p["seconds"].get<double>();
    }
    EXPECT_NEAR(sum, step, 1e-9 * step);

    // bottleneck: one vocabulary resource; its share is what the breakdown attributes to it.
    ASSERT_TRUE(j["bottleneck"]["resource"].is_string());
    const std::string bottleneck = j["bottleneck"]["resource"].get<std::string>();
    EXPECT_TRUE(in_vocabulary(bottleneck)) << bottleneck;
    const double share = j["bottleneck"]["share"].get<double>();
    EXPECT_GT(share, 0);
    EXPECT_LE(share, 1);
    double attributed = 0;
    for (const Json& p : j["step"]["breakdown"])
        if (p["resource"] == bottleneck) attributed += p["seconds"].get<double>();
    EXPECT_NEAR(attributed / step, share, 1e-9) << "bottleneck share is not its part of step.breakdown";

    // throughput
    const Json& t = j["throughput"];
    EXPECT_GT(t["tokens_per_second"].get<double>(), 0);
    EXPECT_NEAR(t["tokens_per_second_per_gpu"].get<double>() * j["gpus"].get<double>(), t["tokens_per_second"].get<double>(),
                1e-9 * t["tokens_per_second"].get<double>());
    EXPECT_GT(t["mfu"].get<double>(), 0);
    EXPECT_LT(t["mfu"].get<double>(), 1);
    EXPECT_GT(t["hfu"].get<double>(), 0);
    EXPECT_LT(t["hfu"].get<double>(), 1);

    // weak points: {resource, what, impact}, vocabulary resources, ranked by speed-up (memory capacity's impact
    // is a headroom fraction, not a speed-up, so it is left out of the ranking).
    ASSERT_TRUE(j["weak_points"].is_array());
    double previous_impact = 1e300;
    for (const Json& w : j["weak_points"]) {
        if (w.contains("impact") && w["impact"].is_number() && w["resource"] != "memory_capacity") {
            EXPECT_LE(w["impact"].get<double>(), previous_impact) << "weak points not ranked: " << j["weak_points"].dump();
            previous_impact = w["impact"].get<double>();
        }
        ASSERT_TRUE(w.contains("resource") && w["resource"].is_string()) << w.dump();
        EXPECT_TRUE(in_vocabulary(w["resource"].get<std::string>())) << w.dump();
        ASSERT_TRUE(w.contains("what") && w["what"].is_string()) << w.dump();
        EXPECT_FALSE(w["what"].get<std::string>().empty());
        ASSERT_TRUE(w.contains("impact") && w["impact"].is_number()) << w.dump();
    }

    // Nulls the contract allows: time_to_train without data.tokens, cost without a price; energy only with a job
    // length. Everything else a number.
    ASSERT_TRUE(j.contains("time_to_train_seconds"));
    ASSERT_TRUE(j.contains("energy_kwh"));
    ASSERT_TRUE(j.contains("cost"));
    EXPECT_TRUE(j["time_to_train_seconds"].is_null() || j["time_to_train_seconds"].is_number());
    EXPECT_TRUE(j["cost"].is_null() || j["cost"].is_number());
    EXPECT_EQ(j["energy_kwh"].is_null(), j["time_to_train_seconds"].is_null());
    if (j["time_to_train_seconds"].is_number()) {
        EXPECT_GT(j["time_to_train_seconds"].get<double>(), 0);
    }
    if (j["energy_kwh"].is_number()) {
        EXPECT_GT(j["energy_kwh"].get<double>(), 0);
    }
    if (j["cost"].is_number()) {
        EXPECT_GT(j["cost"].get<double>(), 0);
    }
    const Json& rel = j["reliability"];
    EXPECT_GT(rel["checkpoint_interval_seconds"].get<double>(), 0);
    if (has_length) {
        EXPECT_GE(rel["expected_interruptions"].get<double>(), 0);
        EXPECT_GT(rel["goodput"].get<double>(), 0);
        EXPECT_LE(rel["goodput"].get<double>(), 1);
    }
    expect_all_finite(j);
}

TEST(PlanJsonContract, ExampleJobs) {
    for (const char* name : {"llama3.1-70b-full-8xh100-unsharded.yaml", "llama3.1-8b-lora-r760xa.yaml",
                             "llama3.1-8b-lora-rtx4090.yaml"}) {
        const Json j = plan_json({example(name)});
        check_contract(j, name);
    }
}

TEST(PlanJsonContract, TestJobs) {
    for (const char* name : {"llama3-405b-16k-gpus.yaml", "full-8b-on-small-psu.yaml", "lora-8b-8xh100-few-hours.yaml",
                             "full-1b-no-data.yaml", "lora-8b-cpu-server.yaml", "pipeline-13b-bubble.yaml",
                             "zero3-8b-2-nodes-25g.yaml", "offload-8b-4xh100-pcie.yaml"}) {
        const Json j = plan_json({plan_data(name)});
        check_contract(j, name);
        // The text form of the same plan: no NaN or infinity printed.
        const auto text = run_ftbound({"plan", plan_data(name)});
        EXPECT_EQ(text.exit_code, 0) << describe(text);
        for (const char* bad : {"nan", "NaN", "inf ", "inf%", "-inf"}) EXPECT_EQ(text.out.find(bad), std::string::npos) << name << ": " << bad;
    }
}

TEST(PlanJsonContract, CostNullWithoutPriceTimeNullWithoutTokens) {
    // The RTX 4090 example gives data.tokens but no price.
    const Json priced_not = plan_json({example("llama3.1-8b-lora-rtx4090.yaml")});
    EXPECT_TRUE(priced_not["cost"].is_null());
    EXPECT_TRUE(priced_not["time_to_train_seconds"].is_number());
    EXPECT_TRUE(priced_not["energy_kwh"].is_number());
    // ... and a price makes it a number: GPU-hours x price at least.
    const Json priced = plan_json({example("llama3.1-8b-lora-rtx4090.yaml"), "--set", "ops.price_per_gpu_hour=0.5"});
    ASSERT_TRUE(priced["cost"].is_number());
    EXPECT_GE(priced["cost"].get<double>(), 0.5 * priced["time_to_train_seconds"].get<double>() / 3600);
    // No data section: no time to train, no whole-job energy or cost.
    const Json no_data = plan_json({plan_data("full-1b-no-data.yaml"), "--set", "ops.price_per_gpu_hour=2"});
    EXPECT_TRUE(no_data["time_to_train_seconds"].is_null());
    EXPECT_TRUE(no_data["cost"].is_null());
}

TEST(PlanJsonContract, TimeToTrainIsTokensOverThroughput) {
    // data.tokens 2e7 x 1 epoch at the predicted tokens/s, in whole steps (the last, partial batch is a step).
    const Json j = plan_json({example("llama3.1-8b-lora-rtx4090.yaml")});
    const double per_step = j["throughput"]["tokens_per_step"].get<double>();
    EXPECT_NEAR(j["time_to_train_seconds"].get<double>(), std::ceil(2e7 / per_step) * j["step"]["seconds"].get<double>(),
                1e-6 * j["time_to_train_seconds"].get<double>());
    EXPECT_NEAR(j["time_to_train_seconds"].get<double>(), 2e7 / j["throughput"]["tokens_per_second"].get<double>(),
                j["step"]["seconds"].get<double>());
    const Json two = plan_json({example("llama3.1-8b-lora-rtx4090.yaml"), "--set", "data.epochs=2"});
    EXPECT_NEAR(two["time_to_train_seconds"].get<double>(), std::ceil(4e7 / per_step) * j["step"]["seconds"].get<double>(),
                1e-6 * two["time_to_train_seconds"].get<double>());
}

TEST(PlanJsonContract, BottleneckIsWhatBoundsTheStepMost) {
    // "bottleneck.resource: the one resource that bounds the step most"; weak_points[] are "ranked" by the
    // speed-up of making each resource 2x better. The two must agree: the bottleneck is the resource whose 2x
    // gives the largest speed-up (power and memory capacity are not step resources and are left out).
    // Cases: ZeRO-3 over PCIe-only GPUs without recompute (the gathers and reduce-scatters outlast the compute)
    // and ZeRO-Offload without recompute.
    const std::vector<std::vector<std::string>> jobs = {
        {plan_data("full-8b-on-small-psu.yaml"), "--set", "train.activation_checkpointing=none"},
        {plan_data("full-8b-on-small-psu.yaml")},
        {plan_data("offload-8b-4xh100-pcie.yaml"), "--set", "train.activation_checkpointing=none"},
        {plan_data("zero3-8b-2-nodes-25g.yaml")},
        {example("llama3.1-8b-lora-r760xa.yaml")},
    };
    for (const auto& args : jobs) {
        const Json j = plan_json(args);
        SCOPED_TRACE(args.back() + "\n" + j["weak_points"].dump() + "\nbottleneck " + j["bottleneck"].dump());
        double previous = 1e300, best = 0;
        std::string best_resource;
        for (const Json& w : j["weak_points"]) {
            if (w["resource"] == "memory_capacity") continue;
            EXPECT_LE(w["impact"].get<double>(), previous) << "weak points not ranked by impact";
            previous = w["impact"].get<double>();
            if (w["resource"] != "power" && w["impact"].get<double>() > best) {
                best = w["impact"].get<double>();
                best_resource = w["resource"].get<std::string>();
            }
        }
        EXPECT_EQ(j["bottleneck"]["resource"].get<std::string>(), best_resource);
    }
}

TEST(PlanJsonContract, RecomputeCountsInHfuNotMfu) {
    // MFU counts model FLOPs without recompute: recomputing can only lower it (same work, longer or equal step).
    // HFU counts what runs: full recompute adds a forward (~2N of ~6N FLOPs per token), so HFU > MFU.
    const std::string job = plan_data("full-1b-no-data.yaml");
    const Json none = plan_json({job, "--set", "train.activation_checkpointing=none"});
    const Json full = plan_json({job, "--set", "train.activation_checkpointing=full"});
    EXPECT_LE(full["throughput"]["mfu"].get<double>(), none["throughput"]["mfu"].get<double>() * (1 + 1e-12));
    EXPECT_GT(full["throughput"]["hfu"].get<double>(), full["throughput"]["mfu"].get<double>() * 1.1);
    EXPECT_GE(full["step"]["seconds"].get<double>(), none["step"]["seconds"].get<double>() * (1 - 1e-12));
}

TEST(PlanJsonContract, TextAndJsonAgreeOnFit) {
    const auto text = run_ftbound({"plan", example("llama3.1-70b-full-8xh100-unsharded.yaml")});
    ASSERT_EQ(text.exit_code, 0) << describe(text);
    EXPECT_NE(text.out.find("DOES NOT FIT"), std::string::npos);
    EXPECT_EQ(text.out.find("nan"), std::string::npos);
    EXPECT_EQ(text.out.find("inf "), std::string::npos);
}

// Bad input: exit 2, `error: ` lines naming the problem, nothing on stdout.
void expect_input_error(const std::vector<std::string>& args, const std::string& must_mention) {
    const auto r = run_ftbound(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << describe(r);
    EXPECT_TRUE(r.out.empty()) << joined << "\nstdout: " << r.out.substr(0, 300);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << joined << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find(must_mention), std::string::npos) << joined << "\nstderr: " << r.err;
}

TEST(PlanErrors, BadSet) {
    const std::string job = example("llama3.1-8b-lora-r760xa.yaml");
    expect_input_error({"plan", job, "--set", "train.micro_batch"}, "train.micro_batch");          // no '='
    expect_input_error({"plan", job, "--set", "=4"}, "--set");                                      // no key
    expect_input_error({"plan", job, "--set", "train..micro_batch=4"}, "train..micro_batch");       // empty part
    expect_input_error({"plan", job, "--set", "train.micro_bach=4", "--json"}, "micro_batch");      // typo: did you mean
    expect_input_error({"plan", job, "--set", "train.micro_batch=abc"}, "train.micro_batch");       // not a number
    expect_input_error({"plan", job, "--set", "train.micro_batch=0"}, "train.micro_batch");         // out of range
    expect_input_error({"plan", job, "--set", "parallel.tp=3"}, "parallel");                        // impossible layout
    expect_input_error({"plan", job, "--set", "train.method=dora"}, "train.method");                // unknown choice
    expect_input_error({"plan", job, "--set", "hardware.system=no-such-server"}, "no-such-server"); // unknown system
}

}  // namespace
}  // namespace ftb
