; Kotlin: classes (interface, enum, data), objects, functions (methods by context), type
; aliases; calls, imports, supertypes (a constructor call is the superclass, a bare type an
; interface). A companion object's functions belong to their class.
(class_declaration "interface" name: (identifier) @name) @def.class.interface
(class_declaration (modifiers (class_modifier "enum")) name: (identifier) @name) @def.class.enum
(class_declaration name: (identifier) @name) @def.class
(object_declaration name: (identifier) @name) @def.class.object
(function_declaration name: (identifier) @name) @def.function
(type_alias type: (identifier) @name) @def.class.type

(delegation_specifier (constructor_invocation (user_type . (identifier) @inherits)))
(delegation_specifier (user_type . (identifier) @implements))

(call_expression . (identifier) @call.name) @call
(call_expression
  . (navigation_expression . (_) @call.receiver (identifier) @call.name .)) @call

(import (qualified_identifier) @import.module) @import
