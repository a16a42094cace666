; C++: C's shapes plus classes, namespaces, qualified (out-of-line) methods, base classes.
(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)) @def.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.function
(function_definition
  declarator: (reference_declarator (function_declarator declarator: (identifier) @name))) @def.function
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier scope: (_) @qualifier name: (_) @name))) @def.method
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class.union
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.class.enum
(type_definition declarator: (type_identifier) @name) @def.class.type
(alias_declaration name: (type_identifier) @name) @def.class.type
(namespace_definition name: (_) @name body: (declaration_list)) @scope

(base_class_clause [(type_identifier) @inherits (qualified_identifier name: (type_identifier) @inherits) (template_type name: (type_identifier) @inherits)])

(call_expression
  function: [
    (identifier) @call.name
    (field_expression argument: (_) @call.receiver field: (field_identifier) @call.name)
    (qualified_identifier scope: (_) @call.receiver name: (identifier) @call.name)
  ]) @call
(new_expression type: (type_identifier) @call.name) @call

(preproc_include path: [(string_literal (string_content) @import.module) (system_lib_string) @import.module]) @import
