# files of local/reference are listed here by the folder's owner
