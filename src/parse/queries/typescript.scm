; TypeScript/TSX only: abstract classes, interfaces, type aliases, enums, signatures, heritage.
(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.class.interface
(type_alias_declaration name: (type_identifier) @name) @def.class.type
(enum_declaration name: (identifier) @name) @def.class.enum
(abstract_method_signature name: (_) @name) @def.method
(method_signature name: (_) @name) @def.method

(extends_clause value: [(identifier) @inherits (member_expression property: (property_identifier) @inherits)])
(implements_clause [(type_identifier) @implements (generic_type name: (type_identifier) @implements)])
(extends_type_clause type: [(type_identifier) @inherits (generic_type name: (type_identifier) @inherits)])
