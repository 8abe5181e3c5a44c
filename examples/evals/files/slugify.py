def slugify(title):
    try:
        return "-".join(title.lower().split())
    except:
        return ""
