; Swift: classes, structs, enums, actors, extensions (named after the type they extend, so
; their members qualify as the type's), protocols, functions and initializers (methods by
; context), type aliases; calls, imports, conformances.
(class_declaration declaration_kind: "class" name: (type_identifier) @name) @def.class
(class_declaration declaration_kind: "actor" name: (type_identifier) @name) @def.class
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @def.class.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @def.class.enum
(class_declaration declaration_kind: "extension"
  name: (user_type . (type_identifier) @name)) @def.class.extension
(protocol_declaration name: (type_identifier) @name) @def.class.protocol
(function_declaration name: (simple_identifier) @name) @def.function
(protocol_function_declaration name: (simple_identifier) @name) @def.function
(init_declaration name: "init" @name) @def.function
(typealias_declaration name: (type_identifier) @name) @def.class.type

(inheritance_specifier inherits_from: (user_type . (type_identifier) @inherits))

(call_expression . (simple_identifier) @call.name) @call
(call_expression
  . (navigation_expression
      target: (_) @call.receiver
      suffix: (navigation_suffix suffix: (simple_identifier) @call.name))) @call

(import_declaration (identifier) @import.module) @import
