// A validator for the subset of JSON Schema (draft 2020-12 style, plus OpenAPI's `nullable`) that
// tool and agent input schemas use in practice.
//
// Supported keywords:
//   type (a name or an array of names: object, array, string, number, integer, boolean, null),
//   enum, const, nullable,
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, not the draft-04 booleans),
//   minLength, maxLength (in Unicode code points),
//   items (one schema), minItems, maxItems, uniqueItems,
//   properties, required, additionalProperties (a boolean or a schema), minProperties, maxProperties,
//   allOf, anyOf, oneOf, not.
// Annotations are accepted and ignored: title, description, default, examples, example, $schema,
// $id, $comment, format, deprecated, readOnly, writeOnly, and any "x-" vendor extension.
// Everything else is rejected when the schema is defined, never silently ignored at validation
// time: a schema that says more than we enforce (or has a typo such as "maxLenght") would let
// through values its author meant to refuse.
//
// Semantics worth knowing:
//   * Numbers compare by value whatever their representation: 3 == 3.0, and "integer" accepts 3.0
//     but not 3.5. "number" accepts integers.
//   * enum, const and uniqueItems use JSON equality: no equality across kinds ("1" != 1,
//     true != 1), objects compare member by member whatever their key order.
//   * Keywords apply only to values of their kind (minLength ignores numbers, ...), as in JSON
//     Schema; use `type` to require a kind.
//   * `nullable: true` (OpenAPI 3.0) makes null valid for the schema whatever its other keywords.
#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <string>

#include "base/status.h"

namespace cairn::model {

// Checks that `schema` is a JSON Schema this validator can enforce. Returns kValidation naming the
// bad part relative to `field` (e.g. "input_schema.properties.city.type") when:
//   * the schema is not an object (the boolean schemas true and false are allowed where JSON
//     Schema allows them: as a subschema, e.g. in properties, items, anyOf or additionalProperties);
//   * a supported keyword has the wrong JSON type or value ("type":"strng", "required":[1],
//     "minimum":"3", "properties":[], "enum":[], "minLength":-1);
//   * a keyword that would change validation is not supported ("$ref", "pattern",
//     "patternProperties", "if"/"then"/"else", "dependentRequired", ...: "is not supported"), or
//     is unknown (probably a typo);
//   * subschemas nest deeper than `max_depth` levels (the root schema is level 1). This also
//     bounds the recursion of ValidateAgainstSchema.
Status ValidateSchemaDefinition(const boost::json::value& schema, const std::string& field, size_t max_depth = 32);

// Validates `value` against `schema`, which ValidateSchemaDefinition must have accepted (on any
// other schema the result is unspecified, but memory-safe). Returns the first violation as
// kValidation whose field() is the path of the offending value starting at `root`
// ("input.items[2].name"; "input" for the value itself) and whose message says which rule failed:
// "must be an integer", "is required" (field() is then the path of the missing member, e.g.
// "input.city"), "must be one of [\"a\",\"b\"]", "must be >= 1",
// "is not allowed (additionalProperties is false)", ...
// Members are checked in the order they appear in `value`, items in index order.
Status ValidateAgainstSchema(const boost::json::value& schema, const boost::json::value& value,
                             const std::string& root = "input");

}  // namespace cairn::model
