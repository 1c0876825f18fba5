package org.parallax.agent;

/** Java-readable method names: {@code pkg.Class.method(int, Object[])}. */
final class Names {
    private Names() {}

    static String method(String owner, String name, String desc) {
        StringBuilder b = new StringBuilder(owner.length() + name.length() + desc.length());
        b.append(owner.replace('/', '.')).append('.').append(name).append('(');
        int i = 1;
        boolean first = true;
        while (desc.charAt(i) != ')') {
            if (!first)
                b.append(", ");
            first = false;
            int dims = 0;
            while (desc.charAt(i) == '[') {
                dims++;
                i++;
            }
            char c = desc.charAt(i);
            if (c == 'L') {
                int end = desc.indexOf(';', i);
                String cls = desc.substring(i + 1, end);
                b.append(cls.substring(cls.lastIndexOf('/') + 1).replace('$', '.'));
                i = end + 1;
            } else {
                b.append(primitive(c));
                i++;
            }
            for (int d = 0; d < dims; d++)
                b.append("[]");
        }
        return b.append(')').toString();
    }

    private static String primitive(char c) {
        switch (c) {
        case 'Z': return "boolean";
        case 'B': return "byte";
        case 'C': return "char";
        case 'S': return "short";
        case 'I': return "int";
        case 'J': return "long";
        case 'F': return "float";
        case 'D': return "double";
        default: return "?";
        }
    }
}
