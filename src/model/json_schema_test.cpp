#include "model/json_schema.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::model {
namespace {

namespace json = boost::json;

json::value J(std::string_view text) { return json::parse(text); }

// One value checked against one schema. An empty `field` means the value must be accepted;
// otherwise the error must name `field` and its message contain `message`.
struct ValueCase {
  std::string_view schema;
  std::string_view value;
  std::string_view field = {};
  std::string_view message = {};
};

void RunValueCases(const std::vector<ValueCase>& cases) {
  for (const ValueCase& c : cases) {
    SCOPED_TRACE("schema " + std::string(c.schema) + ", value " + std::string(c.value));
    json::value schema = J(c.schema);
    Status definition = ValidateSchemaDefinition(schema, "schema");
    ASSERT_TRUE(definition.ok()) << definition.ToString();
    Status status = ValidateAgainstSchema(schema, J(c.value));
    if (c.field.empty()) {
      EXPECT_TRUE(status.ok()) << status.ToString();
      continue;
    }
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kValidation);
    EXPECT_EQ(status.field(), c.field) << status.ToString();
    EXPECT_NE(status.message().find(c.message), std::string::npos) << status.ToString();
  }
}

// One schema definition. An empty `field` means it must be accepted.
struct DefinitionCase {
  std::string_view schema;
  std::string_view field = {};
  std::string_view message = {};
};

void RunDefinitionCases(const std::vector<DefinitionCase>& cases) {
  for (const DefinitionCase& c : cases) {
    SCOPED_TRACE("schema " + std::string(c.schema));
    Status status = ValidateSchemaDefinition(J(c.schema), "input_schema");
    if (c.field.empty()) {
      EXPECT_TRUE(status.ok()) << status.ToString();
      continue;
    }
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kValidation);
    EXPECT_EQ(status.field(), c.field) << status.ToString();
    EXPECT_NE(status.message().find(c.message), std::string::npos) << status.ToString();
  }
}

// ---- Values ----

TEST(JsonSchemaTest, Type) {
  RunValueCases({
      {R"({"type":"string"})", R"("x")"},
      {R"({"type":"string"})", R"("")"},
      {R"({"type":"string"})", "1", "input", "must be a string"},
      {R"({"type":"string"})", "null", "input", "must be a string"},
      {R"({"type":"integer"})", "3"},
      {R"({"type":"integer"})", "-3"},
      {R"({"type":"integer"})", "3.0"},
      {R"({"type":"integer"})", "18446744073709551615"},
      {R"({"type":"integer"})", "1e300"},
      {R"({"type":"integer"})", "3.5", "input", "must be an integer"},
      {R"({"type":"integer"})", R"("3")", "input", "must be an integer"},
      {R"({"type":"integer"})", "true", "input", "must be an integer"},
      {R"({"type":"number"})", "3"},
      {R"({"type":"number"})", "-0.25"},
      {R"({"type":"number"})", R"("3")", "input", "must be a number"},
      {R"({"type":"boolean"})", "false"},
      {R"({"type":"boolean"})", "0", "input", "must be a boolean"},
      {R"({"type":"null"})", "null"},
      {R"({"type":"null"})", "false", "input", "must be null"},
      {R"({"type":"object"})", "{}"},
      {R"({"type":"object"})", "[]", "input", "must be an object"},
      {R"({"type":"array"})", "[]"},
      {R"({"type":"array"})", "{}", "input", "must be an array"},
      {R"({"type":["string","null"]})", "null"},
      {R"({"type":["string","null"]})", R"("x")"},
      {R"({"type":["string","null"]})", "1", "input", "must be a string or null"},
      {R"({"type":["object","array","null"]})", "1", "input", "must be an object, an array or null"},
      {R"({"type":["integer","string"]})", "2.5", "input", "must be an integer or a string"},
  });
}

TEST(JsonSchemaTest, ExactMessages) {
  auto message = [](std::string_view schema, std::string_view value) {
    return ValidateAgainstSchema(J(schema), J(value)).message();
  };
  EXPECT_EQ(message(R"({"type":"integer"})", "1.5"), "input: must be an integer");
  EXPECT_EQ(message(R"({"required":["city"]})", "{}"), "input.city: is required");
  EXPECT_EQ(message(R"({"enum":["a","b"]})", R"("c")"), R"(input: must be one of ["a","b"])");
  EXPECT_EQ(message(R"({"minimum":1})", "0"), "input: must be >= 1");
  EXPECT_EQ(message(R"({"properties":{"a":{}},"additionalProperties":false})", R"({"a":1,"b":2})"),
            "input.b: is not allowed (additionalProperties is false)");
  EXPECT_EQ(message(R"({"minLength":2})", R"("a")"), "input: must have at least 2 characters");
  EXPECT_EQ(message(R"({"uniqueItems":true})", "[1,2,1]"), "input: must not contain duplicate items ([2] equals [0])");
}

TEST(JsonSchemaTest, EnumAndConst) {
  RunValueCases({
      {R"({"enum":["a","b"]})", R"("a")"},
      {R"({"enum":["a","b"]})", R"("c")", "input", R"(must be one of ["a","b"])"},
      {R"({"enum":["a","b"]})", R"("A")", "input", "must be one of"},
      {R"({"enum":[1,2]})", "1.0"},                                   // numbers by value
      {R"({"enum":[1.5,2]})", "3", "input", "must be one of [1.5,2]"},  // not 1.5E0
      {R"({"enum":[1]})", R"("1")", "input", "must be one of [1]"},   // no equality across kinds
      {R"({"enum":[1]})", "true", "input", "must be one of [1]"},
      {R"({"enum":[null]})", "null"},
      {R"({"enum":[null]})", "0", "input", "must be one of [null]"},
      {R"({"enum":[{"a":[1,2],"b":true}]})", R"({"b":true,"a":[1.0,2]})"},  // member-wise, any order
      {R"({"enum":[{"a":[1,2]}]})", R"({"a":[2,1]})", "input", "must be one of"},
      {R"({"enum":[{"a":1}]})", R"({"a":1,"b":2})", "input", "must be one of"},
      {R"({"const":"x"})", R"("x")"},
      {R"({"const":"x"})", R"("y")", "input", R"(must be equal to "x")"},
      {R"({"const":null})", "0", "input", "must be equal to null"},
      {R"({"const":0})", "-0.0"},
      {R"({"const":{"a":1,"b":[true]}})", R"({"b":[true],"a":1.0})"},
      {R"({"const":{"a":1,"b":[true]}})", R"({"a":1,"b":[false]})", "input", R"(must be equal to {"a":1,"b":[true]})"},
  });
}

TEST(JsonSchemaTest, Nullable) {
  RunValueCases({
      {R"({"type":"string","nullable":true})", "null"},
      {R"({"type":"string","nullable":true})", R"("x")"},
      {R"({"type":"string","nullable":true})", "1", "input", "must be a string"},
      {R"({"type":"string","nullable":false})", "null", "input", "must be a string"},
      {R"({"type":"string"})", "null", "input", "must be a string"},
      {R"({"enum":["a"],"nullable":true})", "null"},
      {R"({"properties":{"x":{"type":"integer","nullable":true}}})", R"({"x":null})"},
      {R"({"properties":{"x":{"type":"integer","nullable":true}}})", R"({"x":"1"})", "input.x", "must be an integer"},
  });
}

TEST(JsonSchemaTest, NumericBounds) {
  RunValueCases({
      {R"({"minimum":1})", "1"},
      {R"({"minimum":1})", "1.0"},
      {R"({"minimum":1})", "0.5", "input", "must be >= 1"},
      {R"({"minimum":-2.5})", "-3", "input", "must be >= -2.5"},
      {R"({"maximum":2.5})", "2.5"},
      {R"({"maximum":2.5})", "3", "input", "must be <= 2.5"},
      {R"({"exclusiveMinimum":0})", "0.0001"},
      {R"({"exclusiveMinimum":0})", "0", "input", "must be > 0"},
      {R"({"exclusiveMinimum":0})", "-1", "input", "must be > 0"},
      {R"({"exclusiveMaximum":10})", "9.999"},
      {R"({"exclusiveMaximum":10})", "10.0", "input", "must be < 10"},
      {R"({"minimum":9223372036854775808})", "9223372036854775807", "input", "must be >= 9223372036854775808"},
      {R"({"maximum":-1})", "18446744073709551615", "input", "must be <= -1"},
      {R"({"minimum":1,"maximum":3})", "2"},
      {R"({"minimum":1,"maximum":3})", "4", "input", "must be <= 3"},
      {R"({"minimum":5})", R"("abc")"},  // bounds ignore non-numbers; `type` requires a kind
      {R"({"type":"integer","minimum":1})", "0", "input", "must be >= 1"},
  });
}

TEST(JsonSchemaTest, StringLength) {
  RunValueCases({
      {R"({"minLength":2})", R"("ab")"},
      {R"({"minLength":2})", R"("a")", "input", "must have at least 2 characters"},
      {R"({"minLength":1})", R"("")", "input", "must have at least 1 character"},
      {R"({"maxLength":3})", R"("abc")"},
      {R"({"maxLength":3})", R"("abcd")", "input", "must have at most 3 characters"},
      // Code points, not bytes: é is 2 bytes, 日本 6, 😀 4.
      {R"({"maxLength":5})", R"("héllo")"},
      {R"({"maxLength":2})", R"("日本")"},
      {R"({"minLength":3})", R"("日本")", "input", "must have at least 3 characters"},
      {R"({"maxLength":1})", R"("😀")"},
      {R"({"maxLength":1})", R"("\ud83d\ude00")"},
      {R"({"maxLength":1})", R"("😀😀")", "input", "must have at most 1 character"},
      {R"({"minLength":2.0})", R"("ab")"},
      {R"({"minLength":5})", "12"},  // ignored for numbers
  });
}

TEST(JsonSchemaTest, Arrays) {
  RunValueCases({
      {R"({"items":{"type":"string"}})", R"(["a","b"])"},
      {R"({"items":{"type":"string"}})", "[]"},
      {R"({"items":{"type":"string"}})", R"(["a",1,2])", "input[1]", "must be a string"},
      {R"({"items":{"items":{"type":"integer"}}})", "[[1],[2,3.5]]", "input[1][1]", "must be an integer"},
      {R"({"items":true})", R"([1,"x",null])"},
      {R"({"items":false})", "[]"},
      {R"({"items":false})", "[1]", "input[0]", "is not allowed (the schema is false)"},
      {R"({"minItems":2})", "[1,2]"},
      {R"({"minItems":2})", "[1]", "input", "must have at least 2 items"},
      {R"({"maxItems":1})", "[1]"},
      {R"({"maxItems":1})", "[1,2]", "input", "must have at most 1 item"},
      {R"({"maxItems":0})", "[null]", "input", "must have at most 0 items"},
      {R"({"minItems":1})", "{}"},  // ignored for objects
      {R"({"uniqueItems":true})", "[1,2,3]"},
      {R"({"uniqueItems":true})", R"([1,"1",true,null,[1],{"a":1}])"},
      {R"({"uniqueItems":true})", "[[1,2],[2,1]]"},
      {R"({"uniqueItems":true})", "[1,2,1.0]", "input", "[2] equals [0]"},
      {R"({"uniqueItems":true})", R"([{"a":1,"b":2},{"c":3},{"b":2,"a":1}])", "input", "[2] equals [0]"},
      {R"({"uniqueItems":true})", R"(["x","y","y","x"])", "input", "[2] equals [1]"},
      {R"({"uniqueItems":false})", "[1,1]"},
      {R"({"minItems":3,"items":{"type":"string"}})", "[1]", "input", "must have at least 3 items"},
  });
}

TEST(JsonSchemaTest, UniqueItemsOnALargeArray) {
  // Sorting, not comparing every pair: 20000 items stay fast.
  json::array items;
  for (int i = 0; i < 20000; ++i) items.push_back(i);
  json::value schema = J(R"({"uniqueItems":true})");
  EXPECT_TRUE(ValidateAgainstSchema(schema, items).ok());
  items.push_back(5.0);
  Status status = ValidateAgainstSchema(schema, items);
  EXPECT_EQ(status.message(), "input: must not contain duplicate items ([20000] equals [5])");
}

TEST(JsonSchemaTest, Objects) {
  RunValueCases({
      {R"({"required":["city"]})", R"({"city":"Oslo"})"},
      {R"({"required":["city"]})", R"({"city":null})"},
      {R"({"required":["city"]})", R"({"town":"Oslo"})", "input.city", "is required"},
      {R"({"required":["a","b"]})", R"({"a":1})", "input.b", "is required"},
      {R"({"required":["a"]})", R"("not an object")"},  // ignored for non-objects
      {R"({"properties":{"a":{"type":"string"}}})", R"({"a":"x","other":1})"},
      {R"({"properties":{"a":{"type":"string"}}})", R"({"a":1})", "input.a", "must be a string"},
      {R"({"properties":{"a":{"type":"string"},"b":{"type":"string"}}})", R"({"b":1,"a":2})", "input.b",
       "must be a string"},  // document order
      {R"({"properties":{"address":{"properties":{"zip":{"type":"string"}}}}})", R"({"address":{"zip":5}})",
       "input.address.zip", "must be a string"},
      {R"({"properties":{"address":{"required":["zip"]}}})", R"({"address":{}})", "input.address.zip", "is required"},
      {R"({"properties":{"a":false}})", R"({"b":1})"},
      {R"({"properties":{"a":false}})", R"({"a":1})", "input.a", "is not allowed (the schema is false)"},
      {R"({"properties":{"a":{}},"additionalProperties":false})", R"({"a":1})"},
      {R"({"properties":{"a":{}},"additionalProperties":false})", R"({"a":1,"b":2})", "input.b",
       "is not allowed (additionalProperties is false)"},
      {R"({"additionalProperties":false})", "{}"},
      {R"({"additionalProperties":true})", R"({"x":1})"},
      {R"({"properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}})",
       R"({"a":"x","extra":7})"},
      {R"({"properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}})",
       R"({"a":"x","extra":"y"})", "input.extra", "must be an integer"},
      {R"({"minProperties":1})", R"({"a":1})"},
      {R"({"minProperties":1})", "{}", "input", "must have at least 1 property"},
      {R"({"maxProperties":2})", R"({"a":1,"b":2,"c":3})", "input", "must have at most 2 properties"},
      {R"({"maxProperties":0})", "[1,2]"},  // ignored for arrays
  });
}

TEST(JsonSchemaTest, NestedPaths) {
  const std::string_view schema = R"({
      "type":"object",
      "required":["items"],
      "properties":{
        "items":{"type":"array","items":{
          "type":"object","required":["name"],
          "properties":{"name":{"type":"string","minLength":1},"tags":{"type":"array","items":{"enum":["a","b"]}}}}}}})";
  RunValueCases({
      {schema, R"({"items":[{"name":"x"},{"name":"y","tags":["a","b"]}]})"},
      {schema, R"({})", "input.items", "is required"},
      {schema, R"({"items":{}})", "input.items", "must be an array"},
      {schema, R"({"items":[{"name":"a"},{"name":"b"},{"name":3}]})", "input.items[2].name", "must be a string"},
      {schema, R"({"items":[{"name":"a"},{}]})", "input.items[1].name", "is required"},
      {schema, R"({"items":[{"name":""}]})", "input.items[0].name", "must have at least 1 character"},
      {schema, R"({"items":[{"name":"a","tags":["a","c"]}]})", "input.items[0].tags[1]", "must be one of"},
      {schema, R"([])", "input", "must be an object"},
  });
}

TEST(JsonSchemaTest, CustomRoot) {
  json::value schema = J(R"({"properties":{"x":{"type":"integer"}}})");
  Status status = ValidateAgainstSchema(schema, J(R"({"x":"1"})"), "args");
  EXPECT_EQ(status.field(), "args.x");
  EXPECT_EQ(status.message(), "args.x: must be an integer");
  EXPECT_EQ(ValidateAgainstSchema(J(R"({"type":"object"})"), J("1"), "args").field(), "args");
}

TEST(JsonSchemaTest, Combinators) {
  RunValueCases({
      {R"({"allOf":[{"required":["a"]},{"properties":{"a":{"type":"integer"}}}]})", R"({"a":1})"},
      {R"({"allOf":[{"required":["a"]},{"properties":{"a":{"type":"integer"}}}]})", "{}", "input.a", "is required"},
      {R"({"allOf":[{"required":["a"]},{"properties":{"a":{"type":"integer"}}}]})", R"({"a":"x"})", "input.a",
       "must be an integer"},
      {R"({"anyOf":[{"type":"string"},{"type":"integer"}]})", R"("x")"},
      {R"({"anyOf":[{"type":"string"},{"type":"integer"}]})", "2"},
      {R"({"anyOf":[{"type":"string"},{"type":"integer"}]})", "true", "input",
       "must match at least one schema in anyOf (anyOf[0]: input: must be a string; anyOf[1]: input: must be an integer)"},
      {R"({"anyOf":[{"required":["a"]},{"required":["b"]}]})", R"({"c":1})", "input",
       "anyOf[0]: input.a: is required; anyOf[1]: input.b: is required"},
      {R"({"oneOf":[{"type":"integer"},{"type":"string"}]})", "1"},
      {R"({"oneOf":[{"type":"integer"},{"type":"number"}]})", "1.5"},
      {R"({"oneOf":[{"type":"integer"},{"type":"number"}]})", "1", "input",
       "must match exactly one schema in oneOf, matched oneOf[0] and oneOf[1]"},
      {R"({"oneOf":[{"type":"integer"},{"type":"number"}]})", R"("x")", "input",
       "matched none (oneOf[0]: input: must be an integer; oneOf[1]: input: must be a number)"},
      {R"({"not":{"type":"string"}})", "1"},
      {R"({"not":{"type":"string"}})", R"("x")", "input", "must not match the schema in not"},
      {R"({"not":true})", "1", "input", "must not match the schema in not"},
      {R"({"not":false})", "1"},
      {R"({"anyOf":[false,true]})", "1"},
      {R"({"properties":{"v":{"anyOf":[{"type":"null"},{"minimum":0}]}}})", R"({"v":-1})", "input.v",
       "must match at least one schema in anyOf"},
      {R"({"items":{"allOf":[{"type":"integer"},{"maximum":3}]}})", "[1,2,4]", "input[2]", "must be <= 3"},
  });
}

TEST(JsonSchemaTest, AnnotationsAreIgnored) {
  RunValueCases({
      {R"({"type":"string","format":"email","title":"T","description":"D","default":"d","examples":["a"],
           "example":"a","$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","$comment":"c",
           "deprecated":true,"readOnly":false,"writeOnly":false,"x-vendor":{"anything":1}})",
       R"("not an email")"},
      {R"({"format":"date-time"})", "5"},
  });
}

TEST(JsonSchemaTest, BooleanRootSchemaAtValidationTime) {
  // Not accepted as a definition at the root, but a subschema may be one and the validator handles it.
  EXPECT_TRUE(ValidateAgainstSchema(J("true"), J("1")).ok());
  EXPECT_EQ(ValidateAgainstSchema(J("false"), J("1")).field(), "input");
}

TEST(JsonSchemaTest, RejectedSchemasNeverCrashTheValidator) {
  // Wrong-typed keywords are skipped rather than read as the kind they should have been.
  json::value schema = J(R"({"type":5,"enum":"x","const":1,"items":[1],"required":"a","properties":[],
      "additionalProperties":3,"minimum":"3","minLength":-1,"uniqueItems":"yes","nullable":"yes",
      "anyOf":{},"oneOf":3,"allOf":"x","not":7})");
  for (std::string_view value : {"1", R"("abc")", "[1,1]", R"({"a":{}})", "null", "true"}) {
    (void)ValidateAgainstSchema(schema, J(value));
  }
  EXPECT_EQ(ValidateAgainstSchema(schema, J("2")).field(), "input");  // const still applies
}

// ---- Schema definitions ----

TEST(JsonSchemaDefinitionTest, AcceptsSupportedSchemas) {
  RunDefinitionCases({
      {"{}"},
      {R"({"type":"object","properties":{"city":{"type":"string","minLength":1,"maxLength":100},
           "days":{"type":"integer","minimum":1,"maximum":14},
           "units":{"enum":["metric","imperial"],"default":"metric"},
           "tags":{"type":"array","items":{"type":"string"},"minItems":0,"maxItems":5,"uniqueItems":true},
           "extra":{"type":["object","null"],"additionalProperties":{"type":"number"},"minProperties":1,
                    "maxProperties":3},
           "when":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]},
           "mode":{"oneOf":[{"const":"a"},{"const":"b"}]},
           "n":{"allOf":[{"type":"number"},{"not":{"const":0}}],"exclusiveMinimum":-1,"exclusiveMaximum":1.5},
           "nick":{"type":"string","nullable":true}},
           "required":["city"],"additionalProperties":false})"},
      {R"({"properties":{"a":true,"b":false},"additionalProperties":true,"items":false,"not":true})"},
      {R"({"anyOf":[true,{"type":"string"}]})"},
      {R"({"minLength":2.0,"maxItems":0,"minProperties":18446744073709551615})"},
      {R"({"const":{"anything":[1,{"x":null}]},"enum":[null,1,"a",[],{}]})"},
      {R"({"required":[]})"},
      {R"({"x-internal":true,"x-anything":[1]})"},
  });
}

TEST(JsonSchemaDefinitionTest, RejectsNonObjectSchemas) {
  RunDefinitionCases({
      {"true", "input_schema", "must be a JSON Schema object"},
      {"false", "input_schema", "must be a JSON Schema object"},
      {"[]", "input_schema", "must be a JSON Schema object, not array"},
      {R"("string")", "input_schema", "must be a JSON Schema object"},
      {"null", "input_schema", "must be a JSON Schema object"},
      {R"({"properties":{"a":7}})", "input_schema.properties.a", "must be a JSON Schema object"},
      {R"({"additionalProperties":"no"})", "input_schema.additionalProperties", "must be a JSON Schema object"},
      {R"({"not":null})", "input_schema.not", "must be a JSON Schema object"},
      {R"({"allOf":[true,3]})", "input_schema.allOf[1]", "must be a JSON Schema object"},
  });
}

TEST(JsonSchemaDefinitionTest, RejectsBadKeywordValues) {
  RunDefinitionCases({
      {R"({"type":"strng"})", "input_schema.type", "unknown type"},
      {R"({"type":5})", "input_schema.type", "must be a type name"},
      {R"({"type":[]})", "input_schema.type", "must be a type name"},
      {R"({"type":["string",1]})", "input_schema.type[1]", "unknown type"},
      {R"({"type":["string","string"]})", "input_schema.type[1]", "duplicate type"},
      {R"({"type":"Integer"})", "input_schema.type", "unknown type"},
      {R"({"properties":{"city":{"type":"strng"}}})", "input_schema.properties.city.type", "unknown type"},
      {R"({"properties":[]})", "input_schema.properties", "must be an object"},
      {R"({"required":[1]})", "input_schema.required[0]", "must be a string"},
      {R"({"required":["a",null]})", "input_schema.required[1]", "must be a string"},
      {R"({"required":"a"})", "input_schema.required", "must be an array"},
      {R"({"additionalProperties":{"type":"x"}})", "input_schema.additionalProperties.type", "unknown type"},
      {R"({"items":[{"type":"string"}]})", "input_schema.items", "tuple form"},
      {R"({"items":{"minItems":-1}})", "input_schema.items.minItems", "must be a non-negative integer"},
      {R"({"anyOf":[]})", "input_schema.anyOf", "must be a non-empty array of schemas"},
      {R"({"anyOf":{}})", "input_schema.anyOf", "must be a non-empty array of schemas"},
      {R"({"oneOf":[{"type":"string"},{"type":"bogus"}]})", "input_schema.oneOf[1].type", "unknown type"},
      {R"({"allOf":"x"})", "input_schema.allOf", "must be a non-empty array of schemas"},
      {R"({"enum":[]})", "input_schema.enum", "must be a non-empty array"},
      {R"({"enum":"a"})", "input_schema.enum", "must be a non-empty array"},
      {R"({"minimum":"3"})", "input_schema.minimum", "must be a number"},
      {R"({"maximum":null})", "input_schema.maximum", "must be a number"},
      {R"({"exclusiveMinimum":true})", "input_schema.exclusiveMinimum", "draft-04 boolean form is not supported"},
      {R"({"exclusiveMaximum":"1"})", "input_schema.exclusiveMaximum", "must be a number"},
      {R"({"minLength":-1})", "input_schema.minLength", "must be a non-negative integer"},
      {R"({"maxLength":1.5})", "input_schema.maxLength", "must be a non-negative integer"},
      {R"({"minItems":"1"})", "input_schema.minItems", "must be a non-negative integer"},
      {R"({"maxItems":true})", "input_schema.maxItems", "must be a non-negative integer"},
      {R"({"minProperties":-0.5})", "input_schema.minProperties", "must be a non-negative integer"},
      {R"({"maxProperties":null})", "input_schema.maxProperties", "must be a non-negative integer"},
      {R"({"uniqueItems":"yes"})", "input_schema.uniqueItems", "must be a boolean"},
      {R"({"nullable":1})", "input_schema.nullable", "must be a boolean"},
  });
}

TEST(JsonSchemaDefinitionTest, RejectsUnsupportedAndUnknownKeywords) {
  for (std::string_view keyword :
       {"$ref", "$defs", "definitions", "patternProperties", "if", "then", "else", "dependentRequired",
        "dependentSchemas", "dependencies", "pattern", "multipleOf", "contains", "prefixItems", "additionalItems",
        "propertyNames", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef"}) {
    json::object schema;
    schema["type"] = "object";
    schema[keyword] = json::object();
    Status status = ValidateSchemaDefinition(schema, "input_schema");
    EXPECT_EQ(status.field(), "input_schema." + std::string(keyword)) << keyword;
    EXPECT_NE(status.message().find("is not supported"), std::string::npos) << status.ToString();
  }
  RunDefinitionCases({
      {R"({"$ref":"#/$defs/x"})", "input_schema.$ref", "inline the referenced schema"},
      {R"({"maxLenght":3})", "input_schema.maxLenght", "unknown keyword"},
      {R"({"properties":{"a":{"requried":["b"]}}})", "input_schema.properties.a.requried", "unknown keyword"},
      {R"({"properties":{"a":{"items":{"anyOf":[{"properties":{"b":{"pattern":"^x"}}}]}}}})",
       "input_schema.properties.a.items.anyOf[0].properties.b.pattern", "is not supported"},
  });
}

// {"properties":{"a":{"properties":{"a":...{}}}}} with `levels` schemas in all.
json::value NestedSchema(size_t levels) {
  json::value schema = json::object();
  for (size_t i = 1; i < levels; ++i) {
    json::object outer;
    outer["properties"] = json::object{{"a", std::move(schema)}};
    schema = std::move(outer);
  }
  return schema;
}

TEST(JsonSchemaDefinitionTest, BoundsNesting) {
  EXPECT_TRUE(ValidateSchemaDefinition(NestedSchema(32), "s").ok());
  Status status = ValidateSchemaDefinition(NestedSchema(33), "s");
  EXPECT_EQ(status.code(), StatusCode::kValidation);
  std::string deepest = "s";
  for (int i = 1; i < 33; ++i) deepest += ".properties.a";
  EXPECT_EQ(status.field(), deepest);
  EXPECT_NE(status.message().find("nested deeper than 32 levels"), std::string::npos) << status.ToString();

  EXPECT_TRUE(ValidateSchemaDefinition(NestedSchema(3), "s", 3).ok());
  EXPECT_EQ(ValidateSchemaDefinition(NestedSchema(4), "s", 3).field(), "s.properties.a.properties.a.properties.a");
  // Every way down counts: items, not, combinators.
  EXPECT_FALSE(ValidateSchemaDefinition(J(R"({"items":{"not":{"anyOf":[{}]}}})"), "s", 3).ok());
  EXPECT_TRUE(ValidateSchemaDefinition(J(R"({"items":{"not":{"anyOf":[{}]}}})"), "s", 4).ok());
  EXPECT_EQ(ValidateSchemaDefinition(J(R"({"additionalProperties":{}})"), "s", 1).field(), "s.additionalProperties");
  // A boolean subschema has nothing below it.
  EXPECT_TRUE(ValidateSchemaDefinition(J(R"({"additionalProperties":false})"), "s", 1).ok());
}

}  // namespace
}  // namespace cairn::model
