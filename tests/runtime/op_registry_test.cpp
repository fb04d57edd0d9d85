// Tests of the op registry: lookup spellings, schemas as TVM spells them, traits, attribute kinds and printing.
#include "dpl/ir/op_registry.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace dpl {
namespace {

const OpInfo& op_named(std::string_view name) {
  const OpInfo* info = OpRegistry::global().find(name);
  if (info == nullptr) throw std::runtime_error("no op " + std::string(name));
  return *info;
}

std::string schema(std::string_view name) {
  const OpInfo& info = op_named(name);
  std::string out;
  for (const AttrSpec& spec : info.attrs) {
    if (!out.empty()) out += ", ";
    out += spec.name + "=" + attr_value_str(spec.default_value);
  }
  return out;
}

TEST(OpRegistry, EveryBuiltinOpIsRegisteredInOrder) {
  const OpRegistry& registry = OpRegistry::global();
  ASSERT_GE(registry.size(), static_cast<size_t>(op::kNumBuiltinOps));
  for (OpId id = 0; id < op::kNumBuiltinOps; ++id) {
    const OpInfo& info = registry.get(id);
    EXPECT_EQ(info.id, id);
    EXPECT_NE(info.infer, nullptr) << info.name;
    EXPECT_EQ(registry.find(info.name), &info);
    EXPECT_EQ(registry.find("R." + info.name), &info);
    EXPECT_EQ(registry.find(info.qualified_name()), &info);
    // Exactly one op class.
    uint32_t classes = info.traits & (kElementwise | kBroadcast | kInjective | kReduction | kOpaque);
    EXPECT_TRUE(classes != 0 && (classes & (classes - 1)) == 0) << info.name;
  }
  EXPECT_EQ(registry.get(op::nn_softmax).name, "nn.softmax");
  EXPECT_EQ(registry.find("relax.nn.softmax")->id, op::nn_softmax);
  EXPECT_EQ(registry.find("R.nn.softmax")->id, op::nn_softmax);
  EXPECT_EQ(registry.find("softmax"), nullptr);
  EXPECT_EQ(registry.find("R.nonexistent"), nullptr);
  EXPECT_EQ(registry.find(""), nullptr);
}

TEST(OpRegistry, Arity) {
  EXPECT_EQ(op_named("add").min_operands, 2);
  EXPECT_EQ(op_named("add").max_operands, 2);
  EXPECT_EQ(op_named("nn.attention").min_operands, 3);
  EXPECT_EQ(op_named("nn.attention").max_operands, 4);
  EXPECT_EQ(op_named("nn.batch_norm").min_operands, 5);
  EXPECT_EQ(op_named("arange").max_operands, 0);
  EXPECT_EQ(op_named("concat").max_operands, 1);
}

TEST(OpRegistry, SchemasUseTvmSpellings) {
  EXPECT_EQ(schema("matmul"), "out_dtype=\"void\"");
  EXPECT_EQ(schema("nn.softmax"), "axis=-1");
  EXPECT_EQ(schema("nn.layer_norm"), "axes=[-1], epsilon=1e-05, center=True, scale=True");
  EXPECT_EQ(schema("nn.batch_norm"), "axis=1, epsilon=1e-05, center=True, scale=True, momentum=0.1, training=True");
  EXPECT_EQ(schema("nn.conv2d"),
            "strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout=\"NCHW\", "
            "kernel_layout=\"OIHW\", out_layout=None, out_dtype=\"void\"");
  EXPECT_EQ(schema("nn.conv1d"),
            "strides=[1], padding=[0, 0], dilation=[1], groups=1, data_layout=\"NCW\", kernel_layout=\"OIW\", "
            "out_layout=None, out_dtype=\"void\"");
  EXPECT_EQ(schema("nn.conv2d_transpose"),
            "strides=[1, 1], padding=[0, 0, 0, 0], output_padding=[0, 0], dilation=[1, 1], groups=1, "
            "data_layout=\"NCHW\", kernel_layout=\"IOHW\", out_layout=None, out_dtype=\"void\"");
  EXPECT_EQ(schema("image.resize2d"),
            "layout=\"NCHW\", method=\"linear\", coordinate_transformation_mode=\"half_pixel\", "
            "rounding_method=\"round\", cubic_alpha=-0.75, cubic_exclude=0, extrapolation_value=0.0, "
            "out_dtype=\"void\"");
  EXPECT_EQ(schema("nn.attention"), "scale=None, causal_mask=None, window_size=None");
  EXPECT_EQ(schema("take"), "axis=None, mode=\"fast\"");
  EXPECT_EQ(schema("strided_slice"), "axes=[], begin=[], end=[], strides=None, assume_inbound=False");
  EXPECT_EQ(schema("nn.max_pool2d"),
            "pool_size=[1, 1], strides=[1, 1], dilation=[1, 1], padding=[0, 0, 0, 0], ceil_mode=False, "
            "count_include_pad=False, layout=\"NCHW\", out_layout=None");
  EXPECT_EQ(schema("nn.adaptive_avg_pool2d"), "output_size=None, layout=\"NCHW\", out_layout=None");
  EXPECT_EQ(schema("permute_dims"), "axes=None");
  EXPECT_EQ(schema("mean"), "axis=None, keepdims=False");
  EXPECT_EQ(schema("split"), "indices_or_sections=1, axis=0");
  EXPECT_EQ(schema("cumsum"), "axis=None, dtype=\"void\", exclusive=False");
  EXPECT_EQ(schema("arange"), "start=0, end=None, step=1, dtype=\"void\"");
  EXPECT_EQ(schema("nn.group_norm"),
            "num_groups=1, channel_axis=1, axes=[2, 3], epsilon=1e-05, center=True, scale=True");
  EXPECT_EQ(schema("nn.rms_norm"), "axes=[-1], epsilon=1e-05");
  EXPECT_EQ(schema("clip"), "min=None, max=None");
  EXPECT_EQ(schema("astype"), "dtype=\"void\"");
  EXPECT_EQ(schema("concat"), "axis=0");
  EXPECT_EQ(schema("expand_dims"), "axis=[]");
  EXPECT_EQ(schema("squeeze"), "axis=None");
  EXPECT_EQ(schema("triu"), "k=0");
  EXPECT_EQ(schema("nn.bias_add"), "axis=1");
  EXPECT_EQ(schema("nn.dense"), "units=None, out_dtype=\"void\"");
  EXPECT_EQ(schema("nn.leaky_relu"), "alpha=0.01");
  EXPECT_EQ(schema("add"), "");
  EXPECT_EQ(op_named("nn.conv2d").attr_index("groups"), 3);
  EXPECT_EQ(op_named("nn.conv2d").attr_index("group"), -1);
  EXPECT_EQ(op_named("mean").default_attrs().size(), 2u);
}

TEST(OpRegistry, Traits) {
  for (const char* name : {"add", "multiply", "maximum", "minimum", "equal", "not_equal", "logical_and", "logical_or",
                           "bitwise_and", "bitwise_or"})
    EXPECT_TRUE(op_named(name).has(kCommutative)) << name;
  for (const char* name : {"subtract", "divide", "power", "less", "matmul", "concat"})
    EXPECT_FALSE(op_named(name).has(kCommutative)) << name;
  EXPECT_TRUE(op_named("add").has(kBroadcast));
  EXPECT_TRUE(op_named("exp").has(kElementwise));
  EXPECT_TRUE(op_named("nn.relu").has(kElementwise));
  EXPECT_TRUE(op_named("reshape").has(kInjective));
  EXPECT_TRUE(op_named("permute_dims").has(kInjective));
  EXPECT_TRUE(op_named("sum").has(kReduction));
  EXPECT_TRUE(op_named("matmul").has(kOpaque));
  EXPECT_TRUE(op_named("nn.softmax").has(kOpaque));
}

TEST(OpRegistry, UserOpsRegisterOnce) {
  OpRegistry& registry = OpRegistry::global();
  OpInfo info;
  info.name = "my.custom_gemm";
  info.min_operands = info.max_operands = 2;
  info.attrs = {AttrSpec{"alpha", AttrKind::Float, 1.0}};
  size_t before = registry.size();
  OpId id = registry.add(info);
  EXPECT_EQ(registry.size(), before + 1);
  EXPECT_EQ(registry.add(info), id);
  EXPECT_EQ(registry.size(), before + 1);
  EXPECT_EQ(registry.find("R.my.custom_gemm")->id, id);
  OpInfo other = info;
  other.min_operands = 1;
  EXPECT_THROW(registry.add(other), std::invalid_argument);
  OpInfo clash;
  clash.name = "add";
  EXPECT_THROW(registry.add(clash), std::invalid_argument);
}

TEST(AttrKinds, MatchAndConvert) {
  AttrValue value = int64_t{1};
  EXPECT_TRUE(attr_matches_kind(AttrKind::Float, value));
  EXPECT_TRUE(std::holds_alternative<double>(value));
  EXPECT_EQ(std::get<double>(value), 1.0);
  AttrValue none;
  EXPECT_TRUE(attr_matches_kind(AttrKind::OptInt, none));
  EXPECT_TRUE(attr_matches_kind(AttrKind::OptFloat, none));
  EXPECT_TRUE(attr_matches_kind(AttrKind::OptString, none));
  EXPECT_FALSE(attr_matches_kind(AttrKind::Int, none));
  AttrValue dtype = std::string("float16");
  EXPECT_TRUE(attr_matches_kind(AttrKind::DType, dtype));
  AttrValue void_dtype = std::string("void");
  EXPECT_TRUE(attr_matches_kind(AttrKind::DType, void_dtype));
  AttrValue bad_dtype = std::string("floaty");
  EXPECT_FALSE(attr_matches_kind(AttrKind::DType, bad_dtype));
  AttrValue list = std::vector<int64_t>{1, 0};
  EXPECT_TRUE(attr_matches_kind(AttrKind::IntList, list));
  EXPECT_TRUE(attr_matches_kind(AttrKind::IntOrIntList, list));
  EXPECT_FALSE(attr_matches_kind(AttrKind::Int, list));
  AttrValue flag = true;
  EXPECT_FALSE(attr_matches_kind(AttrKind::Int, flag));
  AttrValue real = 0.5;
  EXPECT_FALSE(attr_matches_kind(AttrKind::Int, real));
  EXPECT_EQ(attr_kind_name(AttrKind::OptIntList), "int list or None");
  EXPECT_EQ(attr_kind_name(AttrKind::Float), "float");
}

TEST(AttrValues, PrintAsTvmScript) {
  EXPECT_EQ(attr_value_str(AttrValue{}), "None");
  EXPECT_EQ(attr_value_str(true), "True");
  EXPECT_EQ(attr_value_str(false), "False");
  EXPECT_EQ(attr_value_str(int64_t{-1}), "-1");
  EXPECT_EQ(attr_value_str(1e-5), "1e-05");
  EXPECT_EQ(attr_value_str(2.0), "2.0");
  EXPECT_EQ(attr_value_str(std::string("float32")), "\"float32\"");
  EXPECT_EQ(attr_value_str(std::string("a\"b")), "\"a\\\"b\"");
  EXPECT_EQ(attr_value_str(std::vector<int64_t>{1, 0}), "[1, 0]");
  EXPECT_EQ(attr_value_str(std::vector<int64_t>{}), "[]");
  EXPECT_EQ(attr_value_str(std::vector<int64_t>{INT64_MIN, INT64_MAX}),
            "[-9223372036854775808, 9223372036854775807]");
  // The printer appends in place: what is already there stays.
  std::string out = "axes=";
  append_attr_value(out, std::vector<int64_t>{0, -2});
  append_attr_value(out, std::string("a\\b"));
  EXPECT_EQ(out, "axes=[0, -2]\"a\\\\b\"");
}

// What a compiled pattern's literal attribute tests: the alternative and the value, as AttrValue's `==` says.
TEST(AttrValues, LiteralTestsAgreeWithEquality) {
  const std::vector<AttrValue> values = {AttrValue{},        true,  false, int64_t{1}, int64_t{0}, 1.0, 0.0,
                                         std::string("1"), std::string(""), std::vector<int64_t>{1, 0},
                                         std::vector<int64_t>{1}, std::vector<int64_t>{}};
  for (const AttrValue& value : values) {
    EXPECT_EQ(attr_is_none(value), value == AttrValue{}) << attr_value_str(value);
    EXPECT_EQ(attr_is_bool(value, true), value == AttrValue(true)) << attr_value_str(value);
    EXPECT_EQ(attr_is_bool(value, false), value == AttrValue(false)) << attr_value_str(value);
    EXPECT_EQ(attr_is_int(value, 1), value == AttrValue(int64_t{1})) << attr_value_str(value);
    EXPECT_EQ(attr_is_float(value, 1.0), value == AttrValue(1.0)) << attr_value_str(value);
    EXPECT_EQ(attr_is_string(value, "1"), value == AttrValue(std::string("1"))) << attr_value_str(value);
    EXPECT_EQ(attr_is_string(value, ""), value == AttrValue(std::string())) << attr_value_str(value);
    EXPECT_EQ(attr_is_ints(value, {1, 0}), value == AttrValue(std::vector<int64_t>{1, 0})) << attr_value_str(value);
    EXPECT_EQ(attr_is_ints(value, {}), value == AttrValue(std::vector<int64_t>{})) << attr_value_str(value);
  }
  // An int is not a float of the same value, nor a one-element list.
  EXPECT_FALSE(attr_is_float(int64_t{1}, 1.0));
  EXPECT_FALSE(attr_is_ints(int64_t{1}, {1}));
  EXPECT_FALSE(attr_is_ints(std::vector<int64_t>{1, 0}, {1}));
}

}  // namespace
}  // namespace dpl
