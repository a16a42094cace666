; Zig: functions (methods inside containers), `const X = struct/enum/union/opaque {…}`
; containers, `test "…"` blocks (subkind test: ranked like tests); calls, `@import`.
(function_declaration name: (identifier) @name) @def.function
(variable_declaration (identifier) @name (struct_declaration)) @def.class.struct
(variable_declaration (identifier) @name (enum_declaration)) @def.class.enum
(variable_declaration (identifier) @name (union_declaration)) @def.class.union
(variable_declaration (identifier) @name (opaque_declaration)) @def.class.type
(test_declaration (string (string_content) @name)) @def.function.test
(test_declaration (identifier) @name) @def.function.test

(call_expression
  function: [
    (identifier) @call.name
    (field_expression object: (_) @call.receiver member: (identifier) @call.name)
  ]) @call

(variable_declaration
  (builtin_function (builtin_identifier) @_import (#eq? @_import "@import")
    (arguments (string (string_content) @import.module)))) @import
