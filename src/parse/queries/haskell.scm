; Haskell: functions and bindings (each equation; its type signature above belongs to it),
; data types, newtypes, type synonyms, type classes and their instances (qualified by the
; instance's type, implementing the class); applications as calls; imports.
(function name: (variable) @name) @def.function
(bind name: (variable) @name) @def.function
(data_type name: (name) @name) @def.class.type
(newtype name: (name) @name) @def.class.type
(type_synonym name: (name) @name) @def.class.type
(class name: (name) @name) @def.class.typeclass
(instance name: (name) @name patterns: (type_patterns . (_) @qualifier)) @def.class.instance
(instance name: (name) @implements patterns: (type_patterns . (_) @implementor))

(apply function: (variable) @call.name) @call
(apply function: (qualified module: (module) @call.receiver id: (variable) @call.name)) @call

(import module: (module) @import.module) @import
(import_name (variable) @import.name)
(class_declarations (signature name: (variable) @name) @def.function)
