# dpl_add_pass_library() (placeholder).
