; C#: types, methods, constructors, local functions, namespaces, invocations, using, base lists.
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.class.interface
(struct_declaration name: (identifier) @name) @def.class.struct
(enum_declaration name: (identifier) @name) @def.class.enum
(record_declaration name: (identifier) @name) @def.class.record
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(local_function_statement name: (identifier) @name) @def.function
(namespace_declaration name: (_) @name body: (declaration_list)) @scope

(base_list [(identifier) @inherits (generic_name (identifier) @inherits) (qualified_name) @inherits])

(invocation_expression
  function: [
    (identifier) @call.name
    (member_access_expression expression: (_) @call.receiver name: (identifier) @call.name)
    (generic_name (identifier) @call.name)
  ]) @call
(object_creation_expression type: (identifier) @call.name) @call

(using_directive [(qualified_name) (identifier)] @import.module) @import
