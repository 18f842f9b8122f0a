#include "app/hardware.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace arbor {
namespace {

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Hardware, ParsesX86CpuInfo) {
  HardwareSignature hw;
  ParseCpuInfo(
      "processor\t: 0\nmodel name\t: AMD EPYC 7763 64-Core Processor\n"
      "flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512bw avx512_vnni amx_tile ht\n\n"
      "processor\t: 1\nmodel name\t: Other\nflags\t\t: sse2\n",
      &hw);
  EXPECT_EQ(hw.cpu_model, "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(hw.isa, (std::vector<std::string>{"amx_tile", "avx", "avx2", "avx512_vnni", "avx512bw",
                                              "avx512f", "fma", "sse4_2"}));
}

TEST(Hardware, ParsesArmCpuInfoAndFallsBack) {
  HardwareSignature hw;
  ParseCpuInfo("processor\t: 0\nFeatures\t: fp asimd evtstrm sve sve2\nModel\t: Neoverse\n", &hw);
  EXPECT_EQ(hw.cpu_model, "Neoverse");
  EXPECT_EQ(hw.isa, (std::vector<std::string>{"asimd", "sve", "sve2"}));
  ParseCpuInfo("", &hw);
  EXPECT_EQ(hw.cpu_model, "unknown");
  EXPECT_TRUE(hw.isa.empty());
}

TEST(Hardware, ParsesGpuTools) {
  EXPECT_EQ(ParseNvidiaSmi(""), "");
  EXPECT_EQ(ParseNvidiaSmi("NVIDIA H100 80GB HBM3\n"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(ParseNvidiaSmi("NVIDIA A10\nNVIDIA A10\n\n"), "NVIDIA A10 x2");
  EXPECT_EQ(ParseRocmSmi("=== Product Info ===\n"
                         "GPU[0]\t\t: Card Series: \t\tAMD Instinct MI300X OAM\n"
                         "GPU[0]\t\t: Card Model: \t\t0x74a1\n"
                         "GPU[1]\t\t: Card Series: \t\tAMD Instinct MI300X OAM\n"),
            "AMD Instinct MI300X OAM x2");
  EXPECT_EQ(ParseRocmSmi("nothing here\n"), "");
}

TEST(Hardware, EnvironmentOverridesDetection) {
  ScopedEnv env("ARBOR_HARDWARE", "cpu=Sim CPU;cores=4;isa=fma,avx2;mem=16;gpu=");
  auto hw = DetectHardware();
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_EQ(hw->cpu_model, "Sim CPU");
  EXPECT_EQ(hw->cores, 4);
  EXPECT_EQ(hw->isa, (std::vector<std::string>{"avx2", "fma"}));
  EXPECT_EQ(hw->mem_gib, 16);
}

TEST(Hardware, MalformedOverrideIsAnError) {
  ScopedEnv env("ARBOR_HARDWARE", "cores=many");
  auto hw = DetectHardware();
  ASSERT_FALSE(hw.ok());
  EXPECT_NE(hw.error().message.find("ARBOR_HARDWARE"), std::string::npos);
}

TEST(Hardware, DetectsThisMachine) {
  ScopedEnv env("ARBOR_HARDWARE", nullptr);
  auto hw = DetectHardware();
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_FALSE(hw->cpu_model.empty());
  EXPECT_GE(hw->cores, 1);
  EXPECT_GT(hw->mem_gib, 0);
  // What is detected survives the encoded form used for storage.
  EXPECT_EQ(HardwareSignature::Decode(hw->Encode()).value_or(HardwareSignature{}).cores, hw->cores);
}

}  // namespace
}  // namespace arbor
