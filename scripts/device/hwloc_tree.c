/* hwloc_tree: the machine as hwloc sees it, one object a line, nested as `lstopo-no-graphics -v`
 * prints it (type, index, size, name and info attributes), I/O devices included: what hwloc
 * knows of a GPU beside what memtopo measures (docs/results/h200.md). For hosts without
 * hwloc's tools; links only libhwloc.
 *   cc -O2 -o hwloc-tree scripts/device/hwloc_tree.c -lhwloc && ./hwloc-tree */
#include <hwloc.h>
#include <stdio.h>

static void print_object(hwloc_topology_t topology, hwloc_obj_t obj, int depth) {
  char type[64], attrs[1024];
  hwloc_obj_type_snprintf(type, sizeof type, obj, 1);
  hwloc_obj_attr_snprintf(attrs, sizeof attrs, obj, ", ", 1);
  printf("%*s%s", 2 * depth, "", type);
  if (obj->os_index != HWLOC_UNKNOWN_INDEX && obj->type != HWLOC_OBJ_OS_DEVICE) printf(" P#%u", obj->os_index);
  if (obj->name) printf(" \"%s\"", obj->name);
  if (attrs[0]) printf(" (%s)", attrs);
  printf("\n");
  for (hwloc_obj_t child = obj->memory_first_child; child; child = child->next_sibling)
    print_object(topology, child, depth + 1);
  for (hwloc_obj_t child = obj->first_child; child; child = child->next_sibling) print_object(topology, child, depth + 1);
  for (hwloc_obj_t child = obj->io_first_child; child; child = child->next_sibling) print_object(topology, child, depth + 1);
  for (hwloc_obj_t child = obj->misc_first_child; child; child = child->next_sibling)
    print_object(topology, child, depth + 1);
}

int main(int argc, char** argv) {
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return 1;
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_type_filter(topology, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (argc > 1 && hwloc_topology_set_xml(topology, argv[1]) != 0) {
    fprintf(stderr, "hwloc-tree: %s: not an hwloc XML topology\n", argv[1]);
    return 1;
  }
  if (hwloc_topology_load(topology) != 0) return 1;
  print_object(topology, hwloc_get_root_obj(topology), 0);
  hwloc_topology_destroy(topology);
  return 0;
}
