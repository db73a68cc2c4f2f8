# Turns the files IN (a list, concatenated in order) into a C source OUT
# defining
#   const unsigned char NAME[];  (the bytes, then a NUL so text can be used as a C string)
#   const unsigned long NAME_len; (the bytes, without that NUL)
# NAME defaults to rd_descriptor_set, WHAT to the comment of the descriptor set.
#
#   cmake -DIN="a;b" -DOUT=x.c [-DNAME=sym] [-DWHAT=comment] -P embed.cmake
if(NOT NAME)
  set(NAME rd_descriptor_set)
endif()
if(NOT WHAT)
  set(WHAT "Serialized FileDescriptorSet of the recovery.v1 API, for reflection.")
endif()
set(hex "")
foreach(part ${IN})
  file(READ ${part} part_hex HEX)
  string(APPEND hex "${part_hex}")
endforeach()
string(LENGTH "${hex}" hex_len)
math(EXPR len "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* ${WHAT} */\n"
     "const unsigned char ${NAME}[] = {${bytes}0x00};\n"
     "const unsigned long ${NAME}_len = ${len};\n")
