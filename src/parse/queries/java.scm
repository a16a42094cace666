; Java: types, methods and constructors, invocations, imports, extends/implements.
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.class.interface
(enum_declaration name: (identifier) @name) @def.class.enum
(record_declaration name: (identifier) @name) @def.class.record
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method

(superclass [(type_identifier) @inherits (generic_type (type_identifier) @inherits)])
(super_interfaces (type_list [(type_identifier) @implements (generic_type (type_identifier) @implements)]))
(extends_interfaces (type_list [(type_identifier) @inherits (generic_type (type_identifier) @inherits)]))

(method_invocation object: (_)? @call.receiver name: (identifier) @call.name) @call
(object_creation_expression type: (type_identifier) @call.name) @call

(import_declaration (scoped_identifier) @import.module) @import
