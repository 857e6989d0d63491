// The condition language: every operator, precedence, each refusal with its column, NaN,
// short-circuit, evaluation errors as values.
#include "fieldproof/scenario/condition.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace fieldproof::scenario {
namespace {

using ::testing::HasSubstr;

// Evaluates `text` with value = v; fails the test on a compile error.
Value eval(const std::string& text, Value v = Value(0.0)) {
  auto c = Condition::compile(text, {"value"});
  EXPECT_TRUE(c.ok()) << text << ": " << (c.ok() ? "" : c.error().message);
  if (!c.ok()) return Value();
  auto r = c->evaluate(Variables{{"value", v}});
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return Value();
  return *r;
}

double num(const std::string& text, Value v = Value(0.0)) {
  Value r = eval(text, v);
  EXPECT_TRUE(r.is_number()) << text << " gave " << r.repr();
  return r.is_number() ? r.as_number() : std::nan("");
}

bool truth(const std::string& text, Value v = Value(0.0)) {
  Value r = eval(text, v);
  EXPECT_TRUE(r.is_bool()) << text << " gave " << r.repr();
  return r.is_bool() && r.as_bool();
}

// The compile error of `text` (the test fails if it compiles).
ConditionError refused(const std::string& text, std::vector<std::string> names = {"value"}) {
  auto c = Condition::compile(text, std::move(names));
  EXPECT_FALSE(c.ok()) << text << " compiled";
  if (c.ok()) return {};
  return c.error();
}

// The evaluation error of `text` with value = v.
ConditionError eval_error(const std::string& text, Value v = Value(0.0)) {
  auto c = Condition::compile(text, {"value"});
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  if (!c.ok()) return {};
  auto r = c->evaluate(Variables{{"value", v}});
  EXPECT_FALSE(r.ok()) << text << " evaluated to " << (r.ok() ? r->repr() : "");
  if (r.ok()) return {};
  return r.error();
}

TEST(ConditionArithmetic, AddSubtractMultiplyDivide) {
  EXPECT_EQ(num("1 + 2"), 3.0);
  EXPECT_EQ(num("5 - 7"), -2.0);
  EXPECT_EQ(num("3 * 4"), 12.0);
  EXPECT_EQ(num("7 / 2"), 3.5);
}

TEST(ConditionArithmetic, ModuloTakesTheSignOfTheDivisorAsPython) {
  EXPECT_EQ(num("7 % 3"), 1.0);
  EXPECT_EQ(num("-7 % 3"), 2.0);
  EXPECT_EQ(num("7 % -3"), -2.0);
}

TEST(ConditionArithmetic, UnaryMinusAndPlus) {
  EXPECT_EQ(num("-value", Value(2.5)), -2.5);
  EXPECT_EQ(num("--3"), 3.0);
  EXPECT_EQ(num("+value", Value(4.0)), 4.0);
}

TEST(ConditionArithmetic, StringsConcatenate) {
  EXPECT_EQ(eval("'ab' + 'cd'").as_string(), "abcd");
}

TEST(ConditionPrecedence, MultiplicationBindsTighterThanAddition) {
  EXPECT_EQ(num("1 + 2 * 3"), 7.0);
  EXPECT_EQ(num("(1 + 2) * 3"), 9.0);
  EXPECT_EQ(num("10 - 4 - 3"), 3.0);  // left-associative
  EXPECT_EQ(num("16 / 4 / 2"), 2.0);
}

TEST(ConditionPrecedence, UnaryMinusBindsTighterThanMultiplication) {
  EXPECT_EQ(num("-2 * 3"), -6.0);
  EXPECT_EQ(num("2 * -3"), -6.0);
}

TEST(ConditionPrecedence, NotBindsLooserThanComparison) {
  EXPECT_TRUE(truth("not value == 1", Value(2.0)));
  EXPECT_FALSE(truth("not value == 1", Value(1.0)));
}

TEST(ConditionPrecedence, AndBindsTighterThanOr) {
  EXPECT_TRUE(truth("True or False and False"));
  EXPECT_FALSE(truth("(True or False) and False"));
}

TEST(ConditionPrecedence, ConditionalIsLowest) {
  EXPECT_EQ(num("1 + 1 if value > 0 else 5 * 2", Value(1.0)), 2.0);
  EXPECT_EQ(num("1 + 1 if value > 0 else 5 * 2", Value(-1.0)), 10.0);
  EXPECT_EQ(num("1 if False else 2 if True else 3"), 2.0);  // right-associative
}

TEST(ConditionComparison, EachOperator) {
  EXPECT_TRUE(truth("value == 1.5", Value(1.5)));
  EXPECT_TRUE(truth("value != 1.5", Value(1.0)));
  EXPECT_TRUE(truth("value < 2", Value(1.0)));
  EXPECT_TRUE(truth("value <= 1", Value(1.0)));
  EXPECT_TRUE(truth("value > 0", Value(1.0)));
  EXPECT_TRUE(truth("value >= 1", Value(1.0)));
  EXPECT_FALSE(truth("value >= 1", Value(0.5)));
}

TEST(ConditionComparison, ChainsAsPython) {
  EXPECT_TRUE(truth("0 < value < 2", Value(1.0)));
  EXPECT_FALSE(truth("0 < value < 2", Value(3.0)));
  EXPECT_FALSE(truth("0 < value < 2", Value(-1.0)));
  EXPECT_TRUE(truth("1 == 1 < 2 <= 2"));
}

TEST(ConditionComparison, StringsCompareLexicographically) {
  EXPECT_TRUE(truth("value == 'ACTIVE'", Value("ACTIVE")));
  EXPECT_TRUE(truth("value == \"ACTIVE\"", Value("ACTIVE")));
  EXPECT_TRUE(truth("'abc' < 'abd'"));
}

TEST(ConditionComparison, BoolsCompareAsNumbers) {
  EXPECT_TRUE(truth("True == 1"));
  EXPECT_TRUE(truth("value + 1 == 2", Value(true)));
}

TEST(ConditionComparison, InAndNotIn) {
  EXPECT_TRUE(truth("value in ['a', 'b']", Value("a")));
  EXPECT_TRUE(truth("value not in ('a', 'b')", Value("c")));
  EXPECT_TRUE(truth("'CT' in value", Value("ACTIVE")));
  EXPECT_TRUE(truth("'x' in value", Value(Value::Map{{"x", Value(1.0)}})));
  EXPECT_TRUE(truth("2 in value", Value(Value::List{Value(1.0), Value(2.0)})));
}

TEST(ConditionComparison, IsAndIsNot) {
  EXPECT_TRUE(truth("value is None", Value()));
  EXPECT_TRUE(truth("value is not None", Value(0.0)));
  EXPECT_TRUE(truth("value is True", Value(true)));
  EXPECT_FALSE(truth("value is True", Value(1.0)));  // identity, not equality
  EXPECT_TRUE(truth("value is not False", Value(true)));
}

TEST(ConditionLogic, AndOrReturnAnOperandAsPython) {
  EXPECT_EQ(num("0 or 5"), 5.0);
  EXPECT_EQ(num("3 and 4"), 4.0);
  EXPECT_EQ(num("0 and 4"), 0.0);
  EXPECT_EQ(eval("'' or 'x'").as_string(), "x");
}

TEST(ConditionLogic, AndShortCircuitsPastAnError) {
  EXPECT_FALSE(truth("False and 1 / 0 > 1"));
  EXPECT_FALSE(truth("value > 0 and 1 / value > 1", Value(0.0)));
}

TEST(ConditionLogic, OrShortCircuitsPastAnError) {
  EXPECT_TRUE(truth("True or value['missing'] == 1", Value(Value::Map{})));
}

TEST(ConditionLogic, ConditionalEvaluatesOnlyTheChosenBranch) {
  EXPECT_EQ(num("1 / value if value != 0 else 0", Value(0.0)), 0.0);
}

TEST(ConditionLogic, NotUsesPythonTruthiness) {
  EXPECT_TRUE(truth("not value", Value("")));
  EXPECT_TRUE(truth("not value", Value(Value::List{})));
  EXPECT_TRUE(truth("not value", Value()));
  EXPECT_FALSE(truth("not value", Value(2.0)));
}

TEST(ConditionIndexing, ListsByPositionIncludingNegative) {
  Value ranges(Value::List{Value(1.0), Value(2.0), Value(3.0)});
  EXPECT_EQ(num("value[0]", ranges), 1.0);
  EXPECT_EQ(num("value[-1]", ranges), 3.0);
  EXPECT_EQ(num("value[1 + 1]", ranges), 3.0);
}

TEST(ConditionIndexing, MapsByKey) {
  Value msg(Value::Map{{"linear", Value(Value::Map{{"x", Value(0.5)}})}});
  EXPECT_EQ(num("value['linear']['x']", msg), 0.5);
  EXPECT_EQ(num("value[\"linear\"][\"x\"]", msg), 0.5);
}

TEST(ConditionIndexing, OutOfRangeIsAnErrorValueNamingTheColumn) {
  ConditionError e = eval_error("value[3] > 0", Value(Value::List{Value(1.0)}));
  EXPECT_EQ(e.column, 6);
  EXPECT_THAT(e.message, HasSubstr("out of range"));
}

TEST(ConditionIndexing, MissingKeyIsAnErrorValue) {
  ConditionError e = eval_error("value['y']", Value(Value::Map{{"x", Value(1.0)}}));
  EXPECT_THAT(e.message, HasSubstr("no field 'y'"));
}

TEST(ConditionIndexing, NonIntegerIndexIsAnErrorValue) {
  ConditionError e = eval_error("value[0.5]", Value(Value::List{Value(1.0)}));
  EXPECT_THAT(e.message, HasSubstr("indices must be integers"));
}

TEST(ConditionFunctions, AbsSqrtRound) {
  EXPECT_EQ(num("abs(value)", Value(-0.2)), 0.2);
  EXPECT_EQ(num("sqrt(16)"), 4.0);
  EXPECT_EQ(num("round(2.5)"), 2.0);  // half to even, as Python
  EXPECT_EQ(num("round(3.5)"), 4.0);
  EXPECT_NEAR(num("round(1.2345, 2)"), 1.23, 1e-12);
}

TEST(ConditionFunctions, MinMaxOfArgumentsAndOfAList) {
  EXPECT_EQ(num("min(3, 1, 2)"), 1.0);
  EXPECT_EQ(num("max(3, 1, 2)"), 3.0);
  EXPECT_EQ(num("min(value)", Value(Value::List{Value(5.0), Value(-1.0)})), -1.0);
  EXPECT_EQ(num("max(value)", Value(Value::List{Value(5.0), Value(-1.0)})), 5.0);
}

TEST(ConditionFunctions, LenOfStringListAndMap) {
  EXPECT_EQ(num("len(value)", Value("abcd")), 4.0);
  EXPECT_EQ(num("len(value)", Value(Value::List(720, Value(1.0)))), 720.0);
  EXPECT_EQ(num("len(value)", Value(Value::Map{{"a", Value(1.0)}})), 1.0);
}

TEST(ConditionFunctions, FloatAndInt) {
  EXPECT_EQ(num("float('2.5')"), 2.5);
  EXPECT_EQ(num("float(True)"), 1.0);
  EXPECT_EQ(num("int(2.9)"), 2.0);
  EXPECT_EQ(num("int(-2.9)"), -2.0);
  EXPECT_EQ(num("int('12')"), 12.0);
  EXPECT_TRUE(std::isinf(num("float('inf')")));
}

TEST(ConditionFunctions, IsnanAndIsinf) {
  EXPECT_TRUE(truth("isnan(value)", Value(std::nan(""))));
  EXPECT_FALSE(truth("isnan(value)", Value(1.0)));
  EXPECT_TRUE(truth("isinf(value)", Value(HUGE_VAL)));
  EXPECT_TRUE(truth("isinf(-inf)"));
}

TEST(ConditionFunctions, TypeMismatchIsAnErrorValue) {
  ConditionError e = eval_error("abs(value) < 1", Value("text"));
  EXPECT_EQ(e.column, 1);
  EXPECT_THAT(e.message, HasSubstr("abs() needs a number, not str"));
}

TEST(ConditionFunctions, SqrtOfNegativeIsAnErrorValue) {
  EXPECT_THAT(eval_error("sqrt(value)", Value(-1.0)).message, HasSubstr("negative"));
}

TEST(ConditionFunctions, IntOfNanIsAnErrorValue) {
  EXPECT_THAT(eval_error("int(value)", Value(std::nan(""))).message, HasSubstr("int() of nan"));
}

TEST(ConditionConstants, PiInfNanTrueFalseNone) {
  EXPECT_NEAR(num("pi"), 3.141592653589793, 1e-15);
  EXPECT_TRUE(truth("inf > 1e308"));
  EXPECT_TRUE(truth("isnan(nan)"));
  EXPECT_TRUE(truth("True"));
  EXPECT_FALSE(truth("False"));
  EXPECT_TRUE(eval("None").is_null());
}

TEST(ConditionNan, EveryOrderingWithNanIsFalse) {
  Value nan(std::nan(""));
  EXPECT_FALSE(truth("value < 1", nan));
  EXPECT_FALSE(truth("value >= 1", nan));
  EXPECT_FALSE(truth("value == value", nan));
  EXPECT_TRUE(truth("value != value", nan));
  EXPECT_FALSE(truth("nan == nan"));
}

TEST(ConditionNan, NanIsTruthyAsInPython) { EXPECT_FALSE(truth("not nan")); }

TEST(ConditionErrors, DivisionByZeroIsAnErrorValueWithColumn) {
  ConditionError e = eval_error("1 + value / 0");
  EXPECT_EQ(e.column, 11);
  EXPECT_THAT(e.message, HasSubstr("division by zero"));
}

TEST(ConditionErrors, OrderingAcrossKindsIsAnErrorValue) {
  EXPECT_THAT(eval_error("value < 1", Value("a")).message,
              HasSubstr("'<' is not supported between str and float"));
}

TEST(ConditionErrors, MissingVariableIsAnErrorValue) {
  auto c = Condition::compile("speed > 1", {"speed"});
  ASSERT_TRUE(c.ok());
  auto r = c->evaluate(Variables{});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("speed has no value"));
}

TEST(ConditionErrors, HoldsReportsTheErrorToo) {
  auto c = Condition::compile("value + 'a'", {"value"});
  ASSERT_TRUE(c.ok());
  auto r = c->holds(Variables{{"value", Value(1.0)}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("unsupported operand types for +: float and str"));
}

TEST(ConditionSignals, NamedSignalsAreRead) {
  auto c = Condition::compile("not lost and abs(speed) < 0.05", {"lost", "speed"});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(*c->holds(Variables{{"lost", Value(false)}, {"speed", Value(0.01)}}));
  EXPECT_FALSE(*c->holds(Variables{{"lost", Value(true)}, {"speed", Value(0.01)}}));
}

TEST(ConditionSignals, SlotsEvaluateInNamesOrder) {
  auto c = Condition::compile("a - b", {"a", "b"});
  ASSERT_TRUE(c.ok());
  std::vector<Value> slots = {Value(5.0), Value(3.0)};
  EXPECT_EQ(c->evaluate(slots)->as_number(), 2.0);
}

TEST(ConditionSignals, NamesReadListsOnlyTheNamesUsed) {
  auto c = Condition::compile("a > 1", {"a", "b"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->names_read(), std::vector<std::string>{"a"});
}

TEST(ConditionSignals, ASignalCannotShadowAFunctionOrConstant) {
  EXPECT_FALSE(Condition::compile("abs > 1", {"abs"}).ok());
  EXPECT_FALSE(Condition::compile("pi > 1", {"pi"}).ok());
  EXPECT_FALSE(is_valid_signal_name("lambda"));
  EXPECT_TRUE(is_valid_signal_name("speed_2"));
}

TEST(ConditionCompile, CompiledOnceEvaluatesManyTimes) {
  auto c = Condition::compile("value * 2 > 3", {"value"});
  ASSERT_TRUE(c.ok());
  int held = 0;
  for (int i = 0; i < 100; ++i) {
    if (*c->holds(Variables{{"value", Value(static_cast<double>(i))}})) ++held;
  }
  EXPECT_EQ(held, 98);
}

// ---- refusals, each with the column of the offending token ---------------------------------

TEST(ConditionRefusal, AttributeAccess) {
  ConditionError e = refused("value.linear > 0");
  EXPECT_EQ(e.column, 6);
  EXPECT_THAT(e.message, HasSubstr("attribute access"));
}

TEST(ConditionRefusal, UnknownName) {
  ConditionError e = refused("speed > 0");
  EXPECT_EQ(e.column, 1);
  EXPECT_THAT(e.message, HasSubstr("unknown name 'speed'"));
}

TEST(ConditionRefusal, CallToAnotherName) {
  ConditionError e = refused("value > exec('x')");
  EXPECT_EQ(e.column, 9);
  EXPECT_THAT(e.message, HasSubstr("'exec' is not a function of the language"));
}

TEST(ConditionRefusal, CallingAValue) {
  ConditionError e = refused("value(1)");
  EXPECT_EQ(e.column, 6);
  EXPECT_THAT(e.message, HasSubstr("only the functions"));
}

TEST(ConditionRefusal, FunctionNotCalled) { EXPECT_EQ(refused("abs > 1").column, 1); }

TEST(ConditionRefusal, Lambda) {
  ConditionError e = refused("(lambda: 1)");
  EXPECT_EQ(e.column, 2);
  EXPECT_THAT(e.message, HasSubstr("lambdas are not allowed"));
}

TEST(ConditionRefusal, Comprehension) {
  ConditionError e = refused("[x for x in value]");
  EXPECT_EQ(e.column, 2);  // `x` is not a name the condition may read
  ConditionError f = refused("[value for value in value]");
  EXPECT_EQ(f.column, 8);
  EXPECT_THAT(f.message, HasSubstr("comprehensions are not allowed"));
}

TEST(ConditionRefusal, Assignment) {
  ConditionError e = refused("value = 1");
  EXPECT_EQ(e.column, 7);
  EXPECT_THAT(e.message, HasSubstr("assignment"));
  EXPECT_EQ(refused("(value := 1)").column, 8);
}

TEST(ConditionRefusal, PowerAndFloorDivision) {
  EXPECT_EQ(refused("value ** 2").column, 7);
  EXPECT_EQ(refused("value // 2").column, 7);
}

TEST(ConditionRefusal, BitwiseOperators) {
  EXPECT_EQ(refused("value & 1").column, 7);
  EXPECT_EQ(refused("value | 1").column, 7);
  EXPECT_EQ(refused("~value").column, 1);
}

TEST(ConditionRefusal, Slices) {
  ConditionError e = refused("value[1:2]");
  EXPECT_EQ(e.column, 8);
}

TEST(ConditionRefusal, DictDisplay) { EXPECT_EQ(refused("{'a': 1}").column, 1); }

TEST(ConditionRefusal, KeywordArgument) {
  ConditionError e = refused("round(value, ndigits=2)");
  EXPECT_EQ(e.column, 14);
  EXPECT_THAT(e.message, HasSubstr("keyword arguments"));
}

TEST(ConditionRefusal, StringPrefix) {
  ConditionError e = refused("value == f'{x}'");
  EXPECT_EQ(e.column, 10);
}

TEST(ConditionRefusal, OtherKeywords) { EXPECT_EQ(refused("value > 1 and import").column, 15); }

TEST(ConditionRefusal, TrailingTokens) {
  ConditionError e = refused("value > 1 2");
  EXPECT_EQ(e.column, 11);
}

TEST(ConditionRefusal, UnclosedParenthesis) {
  ConditionError e = refused("(value > 1");
  EXPECT_EQ(e.column, 11);
}

TEST(ConditionRefusal, EmptyCondition) { EXPECT_EQ(refused("   ").column, 4); }

TEST(ConditionRefusal, UnclosedString) { EXPECT_EQ(refused("value == 'abc").column, 10); }

TEST(ConditionRefusal, WrongArity) {
  EXPECT_EQ(refused("value > abs(1, 2)").column, 9);
  EXPECT_EQ(refused("len()").column, 1);
}

TEST(ConditionRefusal, Semicolon) { EXPECT_EQ(refused("value; 1").column, 6); }

TEST(ConditionRefusal, NestingDeeperThanAHundredLevels) {
  ConditionError e = refused(std::string(200, '(') + "1" + std::string(200, ')'));
  EXPECT_THAT(e.message, HasSubstr("nests more than 100 levels"));
  EXPECT_THAT(refused(std::string(500, '-') + "1").message, HasSubstr("nests more than"));
  EXPECT_THAT(refused(std::string(500, '[') + std::string(500, ']')).message,
              HasSubstr("nests more than"));
}

TEST(ConditionRefusal, LongerThan4096Characters) {
  std::string text = "1";
  while (text.size() <= 4096) text += " + 1";
  ConditionError e = refused(text);
  EXPECT_EQ(e.column, 4097);
}

TEST(ConditionCompile, LongFlatChainsEvaluate) {
  std::string text = "value";
  while (text.size() < 4000) text += " + 1";
  EXPECT_EQ(num(text, Value(0.0)), static_cast<double>((text.size() - 5) / 4));
}

// holds() takes a numeric fast path when every variable is a number or a bool; it must agree
// with the general evaluator on every value, NaN and the infinities included, and on errors.
TEST(ConditionFastPath, AgreesWithTheGeneralEvaluator) {
  const char* conditions[] = {"abs(a) < 0.2",
                              "0 < a < b",
                              "not a and b",
                              "a or b",
                              "a if b else -a",
                              "a / b > 1",
                              "a % b == 1",
                              "sqrt(a) > 1",
                              "round(a) == 2",
                              "round(a, 1) < b",
                              "int(a) == 1",
                              "float(a) >= b",
                              "min(a, b) < 0",
                              "max(a, b, 3) == 3",
                              "isnan(a) or isinf(b)",
                              "a == b",
                              "a != b",
                              "a <= b",
                              "a >= b",
                              "-a + +b * 2 > 0",
                              "a == True",
                              "(a > 0) + (b > 0) == 1",
                              "a > pi",
                              "a < inf and a > -inf"};
  const double values[] = {0.0, 1.0, -1.0, 2.5, 1.5, 0.15, std::nan(""), HUGE_VAL, -HUGE_VAL, 3.0};
  for (const char* text : conditions) {
    auto c = Condition::compile(text, {"a", "b"});
    ASSERT_TRUE(c.ok()) << text;
    for (double a : values) {
      for (double b : values) {
        std::vector<Value> slots = {Value(a), Value(b)};
        auto fast = c->holds(slots);
        auto general = c->evaluate(slots);
        ASSERT_EQ(fast.ok(), general.ok()) << text << " a=" << a << " b=" << b;
        if (fast.ok()) {
          EXPECT_EQ(*fast, general->truthy()) << text << " a=" << a << " b=" << b;
        } else {
          EXPECT_EQ(fast.error().message, general.error().message);
        }
        auto by_name = c->holds(Variables{{"a", Value(a)}, {"b", Value(b)}});
        ASSERT_EQ(by_name.ok(), fast.ok());
        if (by_name.ok()) {
          EXPECT_EQ(*by_name, *fast) << text;
        }
      }
    }
    std::vector<Value> bools = {Value(true), Value(false)};
    auto fast = c->holds(bools);
    auto general = c->evaluate(bools);
    ASSERT_EQ(fast.ok(), general.ok()) << text;
    if (fast.ok()) {
      EXPECT_EQ(*fast, general->truthy()) << text;
    }
  }
}

TEST(ConditionFastPath, NonNumericVariablesTakeTheGeneralPath) {
  auto c = Condition::compile("a < 1", {"a"});
  ASSERT_TRUE(c.ok());
  std::vector<Value> slots = {Value("x")};
  auto r = c->holds(slots);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("'<' is not supported between str and float"));
}

TEST(ConditionValue, ReprAsPython) {
  EXPECT_EQ(Value().repr(), "None");
  EXPECT_EQ(Value(true).repr(), "True");
  EXPECT_EQ(Value(1.5).repr(), "1.5");
  EXPECT_EQ(Value(2.0).repr(), "2");
  EXPECT_EQ(Value("a").repr(), "'a'");
  EXPECT_EQ(Value(Value::List{Value(1.0), Value("x")}).repr(), "[1, 'x']");
}

}  // namespace
}  // namespace fieldproof::scenario
