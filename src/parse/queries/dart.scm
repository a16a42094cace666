; Dart: classes, mixins, extensions, extension types, enums, functions, methods, getters,
; setters and constructors (methods by context); calls, imports, extends/implements/with.
(class_declaration name: (identifier) @name) @def.class
(mixin_declaration name: (identifier) @name) @def.class.mixin
(extension_declaration name: (identifier) @name) @def.class.extension
(extension_type_declaration name: (extension_type_name (identifier) @name)) @def.class.extension
(enum_declaration name: (identifier) @name) @def.class.enum
(type_alias (type_identifier) @name) @def.class.type
(function_declaration signature: (function_signature name: (identifier) @name)) @def.function
(getter_declaration signature: (getter_signature name: (identifier) @name)) @def.function
(setter_declaration signature: (setter_signature name: (identifier) @name)) @def.function
(method_declaration signature: (method_signature [
  (function_signature name: (identifier) @name)
  (getter_signature name: (identifier) @name)
  (setter_signature name: (identifier) @name)
  (constructor_signature name: (identifier) @name)
  (factory_constructor_signature (identifier) @name)
])) @def.function
(declaration [
  (function_signature name: (identifier) @name)
  (getter_signature name: (identifier) @name)
  (setter_signature name: (identifier) @name)
  (constructor_signature name: (identifier) @name)
  (constant_constructor_signature (identifier) @name)
]) @def.function

(superclass (type (type_identifier) @inherits))
(interfaces (type (type_identifier) @implements))
(mixins (type (type_identifier) @implements))

(call_expression
  function: [
    (identifier) @call.name
    (member_expression object: (_) @call.receiver property: (identifier) @call.name)
    (instantiation_expression function: [
      (identifier) @call.name
      (member_expression object: (_) @call.receiver property: (identifier) @call.name)])
  ]) @call

(import_specification uri: (configurable_uri (uri) @import.module)) @import
