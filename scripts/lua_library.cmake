# Joins the Redis store's Lua into the body of one Redis Functions library:
# the shared pieces PIECES (a list, in order) once, then every script of
# SCRIPTS (a list of files) as a function taking KEYS and ARGV, registered
# under RD_LIB .. '_' .. <file name>. The store puts the library's header
# line and the value of RD_LIB in front of it (redis_scripts.c), so the
# text here is what FUNCTION LOAD runs after those two lines.
#
#   cmake -DPIECES="a.lua;b.lua" -DSCRIPTS="x.lua;y.lua" -DOUT=library.lua -P lua_library.cmake
set(text "")
foreach(piece ${PIECES})
  file(READ ${piece} part)
  string(APPEND text "${part}")
endforeach()
foreach(script ${SCRIPTS})
  get_filename_component(name ${script} NAME_WE)
  file(READ ${script} body)
  string(APPEND text "redis.register_function(RD_LIB .. '_${name}', function(KEYS, ARGV)\n"
         "${body}end)\n")
endforeach()
file(WRITE ${OUT} "${text}")
