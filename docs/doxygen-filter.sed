# doxygen-filter.sed: lets Doxygen read the plain C comments of mcpconn.h
# as documentation (INPUT_FILTER of `make docs`), so the header needs no
# Doxygen markup.  The first comment describes the file; every other
# comment that starts a line documents what follows it; a comment after a
# member on the same line documents that member.  Section banners
# (/* ---- */, a title, /* ---- */) stay plain comments.
1s|^/\*$|/** @file|
/^\/\* --*-- \*\/$/{
  n
  n
  b
}
s|^\([ \t]*\)/\*\([ \t]\)|\1/**\2|
s|^\([ \t]*\)/\*$|\1/**|
/^#/b
s|^\([ \t]*[^ \t/][^/]*[^ \t]\)\([ \t]\{1,\}\)/\*\([ \t]\)|\1\2/**<\3|
