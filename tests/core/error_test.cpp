// InputError formatting and closest_match (typo suggestions), plus the small header-only
// helpers: seeded randomness (rng.hpp) and TLM payload extensions (payload.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <tlm>

#include "core/error.hpp"
#include "core/payload.hpp"
#include "core/rng.hpp"

using canopy::closest_match;
using canopy::InputError;

TEST(CoreError, InputErrorCarriesInputPlaceAndMessage) {
    InputError e("cfg.json", "line 3", "unexpected '}'");
    EXPECT_EQ(e.input(), "cfg.json");
    EXPECT_EQ(e.place(), "line 3");
    EXPECT_EQ(e.message(), "unexpected '}'");
    EXPECT_STREQ(e.what(), "cfg.json: line 3: unexpected '}'");
}

TEST(CoreError, InputErrorWithoutPlaceOmitsIt) {
    InputError e("out/stats.json", "", "cannot open for writing");
    EXPECT_STREQ(e.what(), "out/stats.json: cannot open for writing");
    EXPECT_TRUE(e.place().empty());
}

TEST(CoreError, InputErrorIsARuntimeError) {
    try {
        throw InputError("--set", "x", "expected key=value");
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("--set"), std::string::npos);
        return;
    }
    FAIL() << "not caught as std::runtime_error";
}

TEST(CoreError, ClosestMatchFindsTypo) {
    const std::vector<std::string> keys = {"nand.timing.t_read_slc_us", "nand.timing.t_prog_slc_us",
                                           "nand.timing.t_read_mlc_us", "nand.geometry.channels"};
    EXPECT_EQ(closest_match("nand.timing.t_raed_slc_us", keys), "nand.timing.t_read_slc_us");
    EXPECT_EQ(closest_match("nand.timing.t_prog_slc", keys), "nand.timing.t_prog_slc_us");
    EXPECT_EQ(closest_match("nand.geometry.chanels", keys), "nand.geometry.channels");
}

TEST(CoreError, ClosestMatchExactWordIsItself) {
    EXPECT_EQ(closest_match("and", {"or", "and", "xor"}), "and");
}

TEST(CoreError, ClosestMatchFarWordGivesEmpty) {
    const std::vector<std::string> keys = {"nand.timing.t_read_slc_us", "nand.geometry.channels"};
    EXPECT_EQ(closest_match("zebra", keys), "");
    EXPECT_EQ(closest_match("qq", {"pcie", "ccix"}), "");
    EXPECT_EQ(closest_match("anything", {}), "");
}

TEST(CoreError, ClosestMatchShortWordsAllowTwoEdits) {
    // "ccx" is one insertion from "ccix", "pcei" two edits from "pcie".
    EXPECT_EQ(closest_match("ccx", {"pcie", "ccix"}), "ccix");
    EXPECT_EQ(closest_match("pcei", {"pcie", "ccix"}), "pcie");
}

// ---- rng.hpp ----

TEST(CoreRng, DeriveSeedIsStableAndDependsOnNameAndSeed) {
    using canopy::core::derive_seed;
    EXPECT_EQ(derive_seed(1, "nand.ch0.die0"), derive_seed(1, "nand.ch0.die0"));
    EXPECT_NE(derive_seed(1, "nand.ch0.die0"), derive_seed(1, "nand.ch0.die1"));
    EXPECT_NE(derive_seed(1, "nand.ch0.die0"), derive_seed(2, "nand.ch0.die0"));
    EXPECT_NE(derive_seed(1, ""), derive_seed(1, "a"));
    // Many similar names give distinct seeds.
    std::set<uint64_t> seeds;
    for (int i = 0; i < 1000; ++i) seeds.insert(derive_seed(42, "spu" + std::to_string(i)));
    EXPECT_EQ(seeds.size(), 1000u);
}

TEST(CoreRng, DeriveSeedMatchesReferenceValue) {
    // FNV-1a("") is the offset basis, so derive_seed(0, "") == splitmix64(offset basis): pins the
    // function so that results stay reproducible across releases.
    using canopy::core::splitmix64;
    EXPECT_EQ(canopy::core::derive_seed(0, ""), splitmix64(0xcbf29ce484222325ull));
    // splitmix64(0) is the first output of SplitMix64 seeded with 0.
    EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafull);
}

TEST(CoreRng, Uniform01InUnitIntervalAndReproducible) {
    canopy::core::Rng a(canopy::core::derive_seed(7, "x")), b(canopy::core::derive_seed(7, "x"));
    double sum = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
        double u = canopy::core::uniform01(a);
        ASSERT_GE(u, 0.0);
        ASSERT_LT(u, 1.0);
        ASSERT_EQ(u, canopy::core::uniform01(b));
        sum += u;
    }
    // Mean of U[0,1) is 0.5 with standard error 1/sqrt(12 n) ~ 0.0009.
    EXPECT_NEAR(sum / n, 0.5, 0.005);
}

// ---- payload.hpp ----

namespace {
struct TestExt : canopy::core::Extension<TestExt> {
    uint64_t a = 0;
    std::string s;
};
}  // namespace

TEST(CorePayload, ExtensionCloneCopiesFields) {
    TestExt e;
    e.a = 0x1234;
    e.s = "hello";
    tlm::tlm_extension_base* c = e.clone();
    auto* t = dynamic_cast<TestExt*>(c);
    ASSERT_NE(t, nullptr);
    EXPECT_NE(t, &e);
    EXPECT_EQ(t->a, 0x1234u);
    EXPECT_EQ(t->s, "hello");
    c->free();
}

TEST(CorePayload, ExtensionCopyFromCopiesFields) {
    canopy::core::TlpExt a, b;
    a.type = canopy::core::TlpExt::Type::CcixSnoop;
    a.requester_id = 0x0100;
    a.pasid = 77;
    a.at = canopy::core::TlpExt::AddressType::Translated;
    a.vc = 1;
    b.copy_from(a);
    EXPECT_EQ(b.type, canopy::core::TlpExt::Type::CcixSnoop);
    EXPECT_EQ(b.requester_id, 0x0100);
    EXPECT_EQ(b.pasid, 77u);
    EXPECT_EQ(b.at, canopy::core::TlpExt::AddressType::Translated);
    EXPECT_EQ(b.vc, 1);
}

TEST(CorePayload, GenericPayloadDeepCopyClonesExtensions) {
    tlm::tlm_generic_payload src, dst;
    auto* req = new canopy::core::RequestExt;
    req->flow = 99;
    auto* origin = new canopy::core::OriginExt;
    origin->hre = 3;
    src.set_extension(req);
    src.set_extension(origin);
    src.set_command(tlm::TLM_READ_COMMAND);
    src.set_address(0x1000);

    dst.deep_copy_from(src);
    auto* r = dst.get_extension<canopy::core::RequestExt>();
    auto* o = dst.get_extension<canopy::core::OriginExt>();
    ASSERT_NE(r, nullptr);
    ASSERT_NE(o, nullptr);
    EXPECT_NE(r, req);  // a copy, not the same object
    EXPECT_EQ(r->flow, 99u);
    EXPECT_EQ(o->hre, 3);
    EXPECT_EQ(dst.get_address(), 0x1000u);

    // The copies are independent of the source.
    req->flow = 5;
    EXPECT_EQ(dst.get_extension<canopy::core::RequestExt>()->flow, 99u);

    // update_extensions_from copies into an existing extension.
    req->flow = 123;
    dst.update_extensions_from(src);
    EXPECT_EQ(dst.get_extension<canopy::core::RequestExt>()->flow, 123u);
    EXPECT_EQ(dst.get_extension<canopy::core::RequestExt>(), r);
    // Payload destructors free the extensions they hold.
}

TEST(CorePayload, DistinctExtensionTypesHaveDistinctSlots) {
    tlm::tlm_generic_payload p;
    auto* t = new canopy::core::TlpExt;
    t->vc = 1;
    p.set_extension(t);
    EXPECT_EQ(p.get_extension<canopy::core::RequestExt>(), nullptr);
    EXPECT_EQ(p.get_extension<canopy::core::TlpExt>(), t);
    EXPECT_EQ(p.get_extension<canopy::core::TlpExt>()->vc, 1);
}
