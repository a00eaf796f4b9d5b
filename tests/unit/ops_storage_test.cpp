// Storage tiers (data/storage/, src/ops/storage_path.*): which tier a job gets, its figures, and the time to
// train in whole steps.
#include <gtest/gtest.h>

#include "ops/operations.hpp"
#include "ops/storage_path.hpp"
#include "plan_test_util.hpp"
#include "spec/catalog.hpp"
#include "timing/attribution.hpp"

namespace ftb {
namespace {

SystemSpec node_with_drives(int nodes, double write_GBps, double read_GBps) {
    SystemSpec s;
    s.nodes = nodes;
    s.local_storage.write_GBps = write_GBps;
    s.local_storage.read_GBps = read_GBps;
    return s;
}

TEST(OpsStorage, OneNodeWritesItsOwnDrivesManyNodesShareAFileSystem) {
    const StorageTier one = resolve_storage({}, node_with_drives(1, 10, 20));
    EXPECT_EQ(one.name, "local-nvme");
    EXPECT_TRUE(one.node_local);
    EXPECT_FALSE(one.durable);
    EXPECT_DOUBLE_EQ(one.write_GBps_per_node, 10);
    EXPECT_DOUBLE_EQ(one.read_GBps_per_node, 20);
    const StorageTier many = resolve_storage({}, node_with_drives(16, 10, 20));
    EXPECT_EQ(many.name, "parallel-fs");
    EXPECT_TRUE(many.durable);
    EXPECT_GT(many.aggregate_write_GBps, 0);
    // 16 nodes share the appliance's 80 GB/s: 5 GB/s each, below the 48 GB/s one node's link allows.
    EXPECT_DOUBLE_EQ(write_GBps_per_node_sharing(many, 16), many.aggregate_write_GBps / 16);
    EXPECT_DOUBLE_EQ(write_GBps_per_node_sharing(many, 1), many.write_GBps_per_node);
}

TEST(OpsStorage, NodeWithoutDrivesTakesOneDrive) {
    const StorageTier t = resolve_storage({}, node_with_drives(1, 0, 0));
    EXPECT_DOUBLE_EQ(t.write_GBps_per_node, 3.5);
    EXPECT_DOUBLE_EQ(t.read_GBps_per_node, 6.5);
}

TEST(OpsStorage, NamedTiersAndFiguresFromTheJob) {
    StorageChoice nfs;
    nfs.tier = "nfs";
    const StorageTier t = resolve_storage(nfs, node_with_drives(4, 10, 20));
    EXPECT_DOUBLE_EQ(t.write_GBps_per_node, 1.2);
    EXPECT_DOUBLE_EQ(t.aggregate_write_GBps, 12.5);
    // Figures only: a custom tier; reads taken as fast as writes when not given.
    StorageChoice custom;
    custom.write_GBps_per_node = 3;
    const StorageTier c = resolve_storage(custom, node_with_drives(4, 10, 20));
    EXPECT_EQ(c.name, "custom");
    EXPECT_DOUBLE_EQ(c.write_GBps_per_node, 3);
    EXPECT_DOUBLE_EQ(c.read_GBps_per_node, 3);
    EXPECT_DOUBLE_EQ(c.aggregate_write_GBps, 0);
    // A tier with one figure replaced.
    StorageChoice bigger;
    bigger.tier = "parallel-fs";
    bigger.aggregate_write_GBps = 2000;
    EXPECT_DOUBLE_EQ(resolve_storage(bigger, node_with_drives(4, 10, 20)).aggregate_write_GBps, 2000);
}

TEST(OpsStorage, EveryCatalogTierHasSourcesAndRates) {
    for (const auto& name : Catalog::instance().names("storage")) {
        SCOPED_TRACE(name);
        const StorageTier t = Catalog::instance().storage(name, {"test", "tier"});
        EXPECT_FALSE(t.sources.empty());
        EXPECT_GT(t.write_GBps_per_node, 0);
        EXPECT_GT(t.read_GBps_per_node, 0);
    }
}

TEST(OpsStorage, TokenBytesFollowTheVocabulary) {
    EXPECT_DOUBLE_EQ(token_bytes_on_storage(32000), 2);
    EXPECT_DOUBLE_EQ(token_bytes_on_storage(128256), 4);
}

TEST(OpsStorage, TimeToTrainIsWholeStepsAtLeastOne) {
    JobSpec js;
    js.data.tokens = 64e6;
    js.data.epochs = 1;
    // A step of 128M tokens: the 64M-token job still takes one whole step.
    EXPECT_DOUBLE_EQ(steps_to_train(js, 128e6), 1);
    // 2.5 steps' worth: the last partial batch is a step too.
    EXPECT_DOUBLE_EQ(steps_to_train(js, 25.6e6), 3);
    js.data.epochs = 2;
    EXPECT_DOUBLE_EQ(steps_to_train(js, 32e6), 4);
    js.data.tokens = 0;
    EXPECT_DOUBLE_EQ(steps_to_train(js, 32e6), 0);
}

}  // namespace
}  // namespace ftb
