; PHP: classes, interfaces, traits, enums, functions, methods, namespaces, calls, use, heritage.
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.class.interface
(trait_declaration name: (name) @name) @def.class.trait
(enum_declaration name: (name) @name) @def.class.enum
(function_definition name: (name) @name) @def.function
(method_declaration name: (name) @name) @def.method
(namespace_definition name: (namespace_name) @name body: (compound_statement)) @scope

(base_clause [(name) (qualified_name)] @inherits)
(class_interface_clause [(name) (qualified_name)] @implements)

(function_call_expression function: [(name) (qualified_name)] @call.name) @call
(member_call_expression object: (_) @call.receiver name: (name) @call.name) @call
(scoped_call_expression scope: (_) @call.receiver name: (name) @call.name) @call
(object_creation_expression [(name) (qualified_name)] @call.name) @call

(namespace_use_declaration (namespace_use_clause [(name) (qualified_name)] @import.module)) @import
