/* placeholder */
typedef int mcp_placeholder_unit_;
