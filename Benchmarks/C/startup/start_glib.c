/* SPDX-License-Identifier: MIT */
/* Start-up with GObject linked: makes a GObject and looks up its "notify" signal. */
#include <glib-object.h>

int main(void)
{
    GObject *obj = g_object_new(G_TYPE_OBJECT, NULL);
    guint id = g_signal_lookup("notify", G_TYPE_OBJECT);
    g_object_unref(obj);
    return id != 0 ? 0 : 1;
}
