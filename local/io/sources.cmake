# files of local/io are listed here by the folder's owner
