; C: functions, tagged types and typedefs, calls, #include.
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class.union
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.class.enum
(type_definition declarator: (type_identifier) @name) @def.class.type

(call_expression
  function: [
    (identifier) @call.name
    (field_expression argument: (_) @call.receiver field: (field_identifier) @call.name)
  ]) @call

(preproc_include path: [(string_literal (string_content) @import.module) (system_lib_string) @import.module]) @import
