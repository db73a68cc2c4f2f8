# Turns the binary file IN into a C source OUT defining
#   const unsigned char rd_descriptor_set[]; const unsigned long rd_descriptor_set_len;
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR len "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* Serialized FileDescriptorSet of the recovery.v1 API, for reflection. */\n"
     "const unsigned char rd_descriptor_set[] = {${bytes}};\n"
     "const unsigned long rd_descriptor_set_len = ${len};\n")
