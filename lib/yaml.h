/* yaml.h: TEMPORARY shim, to be removed. The object model's header is
 * ynode.h (lib/yaml.h clashed with libyaml's <yaml.h> under -Ilib);
 * include "ynode.h". ynode.c asks for libyaml itself through here. */
#ifdef YNODE_WANTS_LIBYAML
#include_next <yaml.h>
#else
#include "ynode.h"
#endif
