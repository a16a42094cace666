function a() { return "never closed
/* and a comment
