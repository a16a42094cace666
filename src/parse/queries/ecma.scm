; JavaScript and TypeScript share this part: functions, classes, methods, calls, imports.
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @def.function
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @def.function
; A named function handed to a call is defined there: `defineGetter(req, 'ip', function ip() {…})`,
; `router.use(function logger(req, res, next) {…})`.
(call_expression
  arguments: (arguments (function_expression name: (identifier) @name) @def.function))

(call_expression
  function: [
    (identifier) @call.name
    (member_expression object: (_) @call.receiver property: (property_identifier) @call.name)
  ]) @call
(new_expression constructor: (identifier) @call.name) @call

(import_statement source: (string (string_fragment) @import.module)) @import
(import_specifier name: (identifier) @import.name)
(import_clause (identifier) @import.name)
(call_expression
  function: (identifier) @_require (#eq? @_require "require")
  arguments: (arguments (string (string_fragment) @import.module))) @import
