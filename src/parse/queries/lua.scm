; Lua: functions (global, `local function`, `M.f`, `M:f` qualified by their table), functions
; assigned to names or table fields; calls, `require`.
(function_declaration name: (identifier) @name) @def.function
(function_declaration
  name: (dot_index_expression table: (_) @qualifier field: (identifier) @name)) @def.function
(function_declaration
  name: (method_index_expression table: (_) @qualifier method: (identifier) @name)) @def.function
(assignment_statement
  (variable_list . name: [
    (identifier) @name
    (dot_index_expression table: (_) @qualifier field: (identifier) @name)])
  (expression_list . value: (function_definition))) @def.function
(field name: (identifier) @name value: (function_definition)) @def.function

(function_call
  name: [
    (identifier) @call.name
    (dot_index_expression table: (_) @call.receiver field: (identifier) @call.name)
    (method_index_expression table: (_) @call.receiver method: (identifier) @call.name)
  ]) @call

(function_call
  name: (identifier) @_require (#eq? @_require "require")
  arguments: (arguments . (string content: (string_content) @import.module))) @import
