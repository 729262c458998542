#include "graph/op_def.h"

#include "gtest/gtest.h"
#include "graph/op_registry.h"

namespace sluice {
namespace {

TEST(OpDefBuilderTest, ParsesArgsAndAttrs) {
  absl::StatusOr<OpDef> def = OpDefBuilder("Foo")
                                  .Input("a: T")
                                  .Input("list: N * T")
                                  .Input("ref: Ref(T)")
                                  .Input("shape: int32")
                                  .Input("mixed: Tlist")
                                  .Output("out: T")
                                  .Attr("T: {float, double} = DT_FLOAT")
                                  .Attr("N: int >= 1")
                                  .Attr("Tlist: list(type) >= 0")
                                  .Attr("padding: {'SAME', 'VALID'} = 'SAME'")
                                  .Attr("keep_dims: bool = false")
                                  .Attr("perm: list(int) = []")
                                  .Attr("shape_attr: shape = [2, -1]")
                                  .Attr("alpha: float = 0.5")
                                  .Build();
  ASSERT_TRUE(def.ok()) << def.status();
  ASSERT_EQ(def->inputs.size(), 5u);
  EXPECT_EQ(def->inputs[0].type_attr, "T");
  EXPECT_EQ(def->inputs[1].number_attr, "N");
  EXPECT_TRUE(def->inputs[2].is_ref);
  EXPECT_EQ(def->inputs[3].type, DT_INT32);
  EXPECT_EQ(def->inputs[4].type_list_attr, "Tlist");
  const AttrDef* t = def->FindAttr("T");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, "type");
  EXPECT_EQ(t->default_value->type(), DT_FLOAT);
  EXPECT_EQ(t->allowed_values->list().type_size(), 2);
  EXPECT_TRUE(def->FindAttr("N")->has_minimum);
  EXPECT_EQ(def->FindAttr("padding")->default_value->s(), "SAME");
  EXPECT_FALSE(def->FindAttr("keep_dims")->default_value->b());
  EXPECT_FLOAT_EQ(def->FindAttr("alpha")->default_value->f(), 0.5f);
  EXPECT_EQ(def->FindAttr("shape_attr")->default_value->shape().dim(1).size(), -1);
}

TEST(OpDefBuilderTest, BadSpecsNameTheOpAndSpec) {
  struct Case {
    OpDefBuilder builder;
    const char* needle;
  };
  std::vector<Case> cases;
  cases.push_back({OpDefBuilder("A").Input("x: Q"), "neither a type"});
  cases.push_back({OpDefBuilder("B").Attr("T: flaot"), "unknown attr kind"});
  cases.push_back({OpDefBuilder("C").Attr("T: {float} = DT_INT32"), "not one of"});
  cases.push_back({OpDefBuilder("D").Input("x: N * float"), "must be an int attr"});
  cases.push_back({OpDefBuilder("E").Attr("x int"), "expected 'name: kind'"});
  cases.push_back({OpDefBuilder("F").Attr("n: int >= 2 = 1"), "less than its minimum"});
  for (const Case& c : cases) {
    absl::StatusOr<OpDef> def = c.builder.Build();
    ASSERT_FALSE(def.ok());
    EXPECT_EQ(def.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(def.status().message().find(c.needle), std::string::npos) << def.status();
    EXPECT_NE(def.status().message().find("op '"), std::string::npos) << def.status();
  }
}

TEST(OpDefTest, ValidateAttrValue) {
  OpDef def = *OpDefBuilder("V").Attr("T: {float, int32}").Attr("n: int >= 2").Build();
  EXPECT_TRUE(ValidateAttrValue(*def.FindAttr("T"), MakeAttr(DT_INT32)).ok());
  EXPECT_FALSE(ValidateAttrValue(*def.FindAttr("T"), MakeAttr(DT_DOUBLE)).ok());
  EXPECT_FALSE(ValidateAttrValue(*def.FindAttr("T"), MakeAttr(int64_t{3})).ok());
  EXPECT_FALSE(ValidateAttrValue(*def.FindAttr("n"), MakeAttr(int64_t{1})).ok());
  EXPECT_TRUE(ValidateAttrValue(*def.FindAttr("n"), MakeAttr(int64_t{2})).ok());
}

TEST(OpRegistryTest, RegisterLookUpAndDuplicates) {
  OpRegistry reg;
  ASSERT_TRUE(reg.Register(OpDefBuilder("X").Output("y: float")).ok());
  EXPECT_EQ(reg.Register(OpDefBuilder("X")).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(reg.LookUp("X").ok());
  absl::StatusOr<const OpDef*> missing = reg.LookUp("Nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'Nope'"), std::string::npos);
  EXPECT_TRUE(reg.SetNoGradient("X").ok());
  EXPECT_TRUE(reg.Find("X")->no_gradient);
  EXPECT_EQ(reg.SetGradient("Nope", nullptr).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(reg.ListOps(), std::vector<std::string>{"X"});
}

}  // namespace
}  // namespace sluice
