// Every GPU row rule's layout (ops/gpu/row_rule_layouts.h) against its op's
// definition: the variables first, grad where the layout says, and the
// scalars in the order the rule's element function reads them
// (ops/gpu/row_rules.cu.h), named as TensorFlow names them; the sparse
// form's indices right after grad. A layout off by one would feed the GPU
// kernel the wrong hyper-parameter, which only a GPU run would show.
#include "ops/gpu/row_rule_layouts.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "ops/builtins.h"

namespace sluice {
namespace {

using namespace gpu::row_layouts;  // NOLINT: the layouts under test

template <typename Layout>
void ExpectLayoutFits(const std::string& dense_op, const std::vector<std::string>& scalar_names,
                      bool has_sparse_form) {
  SCOPED_TRACE(dense_op);
  ASSERT_EQ(Layout::kScalars.size(), scalar_names.size());
  EXPECT_LE(Layout::kVars - 1, gpu::kMaxRowSlots);
  EXPECT_LE(Layout::kScalars.size(), static_cast<size_t>(gpu::kMaxRowHyper));
  std::vector<std::string> forms = {dense_op};
  if (has_sparse_form) {
    const bool resource = dense_op.rfind("Resource", 0) == 0;
    forms.push_back(resource ? absl::StrCat("ResourceSparse", dense_op.substr(8))
                             : absl::StrCat("Sparse", dense_op));
  }
  for (const std::string& op : forms) {
    const bool sparse = op.find("Sparse") != std::string::npos;
    const OpDef* def = BuiltinOps()->Find(op);
    ASSERT_NE(def, nullptr) << op;
    const auto at = [&](int dense_position) {
      return dense_position > Layout::kGrad && sparse ? dense_position + 1 : dense_position;
    };
    ASSERT_EQ(def->inputs.size(), Layout::kVars + 1 + Layout::kScalars.size() + (sparse ? 1 : 0))
        << op;
    for (int i = 0; i < Layout::kVars; ++i) {
      const ArgDef& arg = def->inputs[i];
      EXPECT_TRUE(arg.is_ref || arg.type == DT_RESOURCE) << op << " input " << i << " " << arg.name;
    }
    EXPECT_EQ(def->inputs[Layout::kGrad].name, "grad") << op;
    if (sparse) EXPECT_EQ(def->inputs[Layout::kGrad + 1].name, "indices") << op;
    for (size_t k = 0; k < scalar_names.size(); ++k) {
      const ArgDef& arg = def->inputs[at(Layout::kScalars[k])];
      EXPECT_EQ(arg.name, scalar_names[k]) << op << ": h[" << k << "]";
      EXPECT_FALSE(arg.is_ref) << op << " " << arg.name;
    }
    if (Layout::kFlag != nullptr) {
      bool found = false;
      for (const AttrDef& a : def->attrs) found |= a.name == Layout::kFlag && a.type == "bool";
      EXPECT_TRUE(found) << op << " has no bool attr " << Layout::kFlag;
    }
  }
}

TEST(RowRuleLayoutsTest, EveryLayoutFitsItsOp) {
  ExpectLayoutFits<MomentumLayout>("ApplyMomentum", {"lr", "momentum"}, true);
  ExpectLayoutFits<KerasMomentumLayout>("ResourceApplyKerasMomentum", {"lr", "momentum"}, true);
  ExpectLayoutFits<AdagradLayout>("ApplyAdagrad", {"lr"}, true);
  ExpectLayoutFits<AdagradV2Layout>("ApplyAdagradV2", {"lr", "epsilon"}, true);
  ExpectLayoutFits<FtrlLayout>("ApplyFtrl", {"lr", "l1", "l2", "lr_power"}, true);
  ExpectLayoutFits<FtrlV2Layout>("ApplyFtrlV2", {"lr", "l1", "l2", "l2_shrinkage", "lr_power"},
                                 true);
  ExpectLayoutFits<AdadeltaLayout>("ApplyAdadelta", {"lr", "rho", "epsilon"}, true);
  ExpectLayoutFits<RMSPropLayout>("ApplyRMSProp", {"lr", "rho", "momentum", "epsilon"}, true);
  ExpectLayoutFits<CenteredRMSPropLayout>("ApplyCenteredRMSProp",
                                          {"lr", "rho", "momentum", "epsilon"}, true);
  ExpectLayoutFits<AdaMaxLayout>("ApplyAdaMax",
                                 {"beta1_power", "lr", "beta1", "beta2", "epsilon"}, false);
  ExpectLayoutFits<AmsgradLayout>(
      "ResourceApplyAdamWithAmsgrad",
      {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"}, false);
  ExpectLayoutFits<SignLayout<gpu::RowRule::kAddSign>>(
      "ApplyAddSign", {"lr", "alpha", "sign_decay", "beta"}, false);
  ExpectLayoutFits<SignLayout<gpu::RowRule::kPowerSign>>(
      "ApplyPowerSign", {"lr", "logbase", "sign_decay", "beta"}, false);
}

}  // namespace
}  // namespace sluice
